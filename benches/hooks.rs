//! Hook-call overhead through the embedded interpreter: one call into a loaded hooks.py
//! (arguments converted to Python, result converted back), measured on our
//! rock-paper-scissors built-in. The engine makes a handful of these per message.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, json};

use aigenora::hooks::python_hooks::PythonHooks;
use aigenora::hooks::{Hooks, Shown};
use aigenora::spec::Role;

#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;

fn bench_hooks(c: &mut Criterion) {
    let data = tempfile::tempdir().unwrap();
    let builtin = aigenora::protocols::find("rock-paper-scissors").unwrap();
    let dir =
        aigenora::protocols::materialize(builtin, &aigenora::layout::DataDir::new(data.path()))
            .unwrap();
    let state = data.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut hooks = PythonHooks::load(&dir).unwrap();
    let options = Map::new();
    common::init_autonomous(&mut hooks, &options, Role::Host, &state);
    let result = json!({"action": "round_result", "round": 0, "host_choice": "rock", "guest_choice": "paper",
        "round_winner": "guest", "host_wins": 0, "guest_wins": 1, "game_over": false, "game_winner": "none"});
    c.bench_function("hook call: proto_display(round_result)", |b| {
        b.iter(|| black_box(hooks.display(&result, Shown::Received).unwrap()))
    });
    let commit = json!({"action": "commit", "round": 0, "hash": "0".repeat(64)});
    c.bench_function("hook call: proto_display(commit) -> None", |b| {
        b.iter(|| black_box(hooks.display(&commit, Shown::Sent).unwrap()))
    });
    c.bench_function("hook call: proto_round_value", |b| {
        b.iter(|| black_box(hooks.round_value(0).unwrap()))
    });
    // The host's per-round judge: the result, its details line and the snapshot's update.
    let (rock, paper) = (json!("rock"), json!("paper"));
    c.bench_function("hook call: proto_round_judge", |b| {
        b.iter(|| black_box(hooks.round_judge(0, &rock, &paper).unwrap()))
    });
}

criterion_group!(benches, bench_hooks);
criterion_main!(benches);
