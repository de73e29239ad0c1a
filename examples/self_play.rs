//! Play a protocol against itself from Rust (what `aigenora protocol test` does):
//! `cargo run --example self_play -- examples/protocols/high-card '{"total_rounds": 5}'`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use aigenora::selfplay::SelfPlay;
use aigenora::spec::ControlMode;
use aigenora::spec::{CheckedOptions, Spec, parse_options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: self_play <protocol dir> [options json]")?,
    );
    let spec = Spec::load_checked(&dir.join("spec.json"))?;
    let options = CheckedOptions::check(spec.value(), parse_options(args.next().as_deref())?)?;
    let play = SelfPlay {
        protocol_dir: dir,
        spec,
        options,
        state_base: std::env::temp_dir().join("aigenora-examples"),
        control_mode: ControlMode::Autonomous,
        think: None,
        pace: Duration::ZERO,
        timeout: Duration::from_secs(30),
        display: Arc::new(|role, text| println!("[{role}] {text}")),
    };
    for side in play.run()? {
        match side.result {
            Ok(outcome) => println!(
                "{}: completed {}, winner {:?}",
                side.role, outcome.completed, outcome.winner
            ),
            Err(error) => println!("{}: failed: {error}", side.role),
        }
    }
    Ok(())
}
