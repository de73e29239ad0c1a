//! The commands for LLM agents, run as the built binary: the guide (`skill install|update|
//! check|version|path`) on temporary project dirs, `bootstrap`, and `doctor` against a real
//! server process (and offline without one).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::cli::aigenora;
use crate::support::relay::free_port;
use crate::support::server::TestServer;

const TARGETS: [(&str, &str); 3] = [
    ("claude-code", ".claude/skills/aigenora"),
    ("codex", ".agents/skills/aigenora"),
    ("opencode", ".opencode/skills/aigenora"),
];

const APPENDICES: [&str; 5] = [
    "COMMANDS.md",
    "GAMES.md",
    "HOOKS.md",
    "PROTOCOLS.md",
    "ROOMS.md",
];

/// The data dir the guide commands of these tests share (where `skill install` remembers
/// what it placed), never the user's own.
fn shared_data_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

fn run(args: &[&str]) -> Output {
    run_in(shared_data_dir(), args)
}

fn run_in(data: &Path, args: &[&str]) -> Output {
    aigenora()
        .env("AIGENORA_DATA_DIR", data)
        .args(args)
        .output()
        .unwrap()
}

/// `aigenora skill <verb> --target T --base BASE [extra] --json`, with its exit code.
fn skill(verb: &str, target: &str, base: &Path, extra: &[&str]) -> (i32, Value) {
    let base = base.to_str().unwrap();
    let mut args = vec!["skill", verb, "--target", target, "--base", base, "--json"];
    args.extend_from_slice(extra);
    let output = run(&args);
    let value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "skill {verb}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap(), value)
}

fn error_line(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "one error line: {stderr}");
    stderr.trim_end().to_string()
}

/// The version `aigenora --version` prints.
fn binary_version() -> String {
    let output = run(&["--version"]);
    let text = String::from_utf8(output.stdout).unwrap();
    text.trim().strip_prefix("aigenora ").unwrap().to_string()
}

fn frontmatter_version(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with("---\n"), "{text}");
    let front = text[4..].split("\n---\n").next().unwrap();
    front
        .lines()
        .find_map(|line| line.strip_prefix("version: "))
        .unwrap()
        .to_string()
}

fn backups(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            file.starts_with(&format!("{name}.bak-"))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn install_places_the_guide_where_each_agent_looks_and_check_says_it_is_current() {
    let version = binary_version();
    let printed = run(&["skill", "version", "--json"]);
    assert!(printed.status.success(), "{printed:?}");
    let printed: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert_eq!(printed["version"], version.as_str());
    for (target, relative) in TARGETS {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join(relative);
        let (code, checked) = skill("check", target, base.path(), &[]);
        assert_eq!(
            (code, checked["status"].as_str()),
            (1, Some("not_installed"))
        );
        let (code, path) = skill("path", target, base.path(), &[]);
        assert_eq!(code, 0);
        assert_eq!(path["skill_md"], dir.join("SKILL.md").to_str().unwrap());
        assert_eq!(path["installed_version"], Value::Null);

        let (code, written) = skill("install", target, base.path(), &[]);
        assert_eq!(code, 0, "{written}");
        assert_eq!(written["personal_created"], true);
        assert_eq!(
            frontmatter_version(&dir.join("SKILL.md")),
            version,
            "{target}"
        );
        for name in APPENDICES.iter().chain(&["PERSONAL.md"]) {
            assert!(dir.join(name).is_file(), "{target}: {name}");
        }
        let (code, checked) = skill("check", target, base.path(), &[]);
        assert_eq!((code, checked["status"].as_str()), (0, Some("current")));
        assert_eq!(checked["installed_version"], version.as_str());
        let (_, path) = skill("path", target, base.path(), &[]);
        assert_eq!(path["installed_version"], version.as_str());

        let (code, again) = skill("install", target, base.path(), &[]);
        assert_eq!(code, 0);
        assert_eq!(again["written"], Value::Array(vec![]), "nothing to rewrite");
        assert_eq!(again["personal_created"], false);
    }
}

#[test]
fn update_backs_up_what_it_replaces_and_never_touches_personal_notes() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join(".claude/skills/aigenora");
    let output = run(&["skill", "update", "--target", "claude-code", "--base"]
        .into_iter()
        .chain([base.path().to_str().unwrap()])
        .collect::<Vec<_>>());
    assert!(
        error_line(&output).contains("no guide installed at"),
        "{output:?}"
    );
    assert_eq!(skill("install", "claude-code", base.path(), &[]).0, 0);
    let ours = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let personal = "- Nickname to register with: zed\n";
    std::fs::write(dir.join("PERSONAL.md"), personal).unwrap();

    // An older guide: check says so, install refuses it, update replaces it with a backup.
    let old = ours.replacen(
        &format!("version: {}", binary_version()),
        "version: 0.0.1",
        1,
    );
    std::fs::write(dir.join("SKILL.md"), &old).unwrap();
    std::fs::write(dir.join("HOOKS.md"), "my own notes on hooks\n").unwrap();
    let (code, checked) = skill("check", "claude-code", base.path(), &[]);
    assert_eq!((code, checked["status"].as_str()), (1, Some("outdated")));
    assert_eq!(checked["installed_version"], "0.0.1");
    let refused = run(&[
        "skill",
        "install",
        "--target",
        "claude-code",
        "--base",
        base.path().to_str().unwrap(),
    ]);
    let line = error_line(&refused);
    assert!(
        line.contains("already exists (version 0.0.1)") && line.contains("skill update"),
        "{line}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("SKILL.md")).unwrap(), old);

    let (code, updated) = skill("update", "claude-code", base.path(), &[]);
    assert_eq!(code, 0, "{updated}");
    assert_eq!(updated["previous_version"], "0.0.1");
    let written: Vec<&str> = updated["written"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(written, ["SKILL.md", "HOOKS.md"]);
    let skill_backups = backups(&dir, "SKILL.md");
    assert_eq!(skill_backups.len(), 1);
    let backup_name = skill_backups[0].file_name().unwrap().to_string_lossy();
    assert!(
        backup_name.starts_with("SKILL.md.bak-0.0.1-"),
        "{backup_name}"
    );
    assert_eq!(std::fs::read_to_string(&skill_backups[0]).unwrap(), old);
    assert_eq!(
        std::fs::read_to_string(&backups(&dir, "HOOKS.md")[0]).unwrap(),
        "my own notes on hooks\n"
    );
    assert_eq!(std::fs::read_to_string(dir.join("SKILL.md")).unwrap(), ours);
    assert_eq!(
        std::fs::read_to_string(dir.join("PERSONAL.md")).unwrap(),
        personal
    );
    assert_eq!(skill("check", "claude-code", base.path(), &[]).0, 0);

    // An edited file of this version is "modified"; an appendix gone is "incomplete".
    std::fs::write(dir.join("GAMES.md"), "edited\n").unwrap();
    let (code, checked) = skill("check", "claude-code", base.path(), &[]);
    assert_eq!((code, checked["status"].as_str()), (1, Some("modified")));
    let games = checked["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "GAMES.md")
        .unwrap();
    assert_eq!(games["status"], "differs");
    std::fs::write(dir.join("GAMES.md"), "").unwrap();
    std::fs::remove_file(dir.join("GAMES.md")).unwrap();
    let (code, checked) = skill("check", "claude-code", base.path(), &[]);
    assert_eq!((code, checked["status"].as_str()), (1, Some("incomplete")));

    // Each replacement leaves a backup; only the newest three of a file stay.
    for round in 0..4 {
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nversion: 0.0.{round}\n---\n"),
        )
        .unwrap();
        assert_eq!(skill("update", "claude-code", base.path(), &[]).0, 0);
    }
    let kept = backups(&dir, "SKILL.md");
    let names: Vec<String> = kept
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for (name, round) in names.iter().zip(1..) {
        assert!(
            name.starts_with(&format!("SKILL.md.bak-0.0.{round}-")),
            "{names:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("PERSONAL.md")).unwrap(),
        personal
    );
}

#[test]
fn path_puts_skill_md_exactly_there_and_the_appendices_beside_it() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("agents/aigenora.md");
    let file_arg = file.to_str().unwrap();
    let args = ["--target", "codex", "--path", file_arg, "--json"];
    let output = run(&[&["skill", "install"][..], &args].concat());
    assert!(output.status.success(), "{output:?}");
    assert_eq!(frontmatter_version(&file), binary_version());
    for name in APPENDICES.iter().chain(&["PERSONAL.md"]) {
        assert!(work.path().join("agents").join(name).is_file(), "{name}");
    }
    let checked = run(&[&["skill", "check"][..], &args].concat());
    assert!(checked.status.success(), "{checked:?}");
    let text = run(&["skill", "check", "--target", "codex", "--path", file_arg]);
    assert_eq!(
        String::from_utf8(text.stdout).unwrap().trim(),
        format!("current: {file_arg} is version {}", binary_version())
    );
    let both = run(&[
        "skill", "path", "--target", "codex", "--path", file_arg, "--base", "x",
    ]);
    assert_eq!(
        both.status.code(),
        Some(2),
        "--base and --path exclude each other"
    );
}

#[test]
fn update_and_check_without_a_target_look_after_every_guide_install_placed() {
    let data = tempfile::tempdir().unwrap();
    let (project, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let refused = run_in(data.path(), &["skill", "check"]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        error_line(&refused).contains("no guide installed"),
        "{refused:?}"
    );
    let install = |target: &str, base: &Path| {
        let base = base.to_str().unwrap();
        let output = run_in(
            data.path(),
            &["skill", "install", "--target", target, "--base", base],
        );
        assert!(output.status.success(), "{output:?}");
    };
    install("claude-code", project.path());
    install("codex", home.path());
    install("claude-code", project.path());
    let claude = project.path().join(".claude/skills/aigenora/SKILL.md");
    let codex = home.path().join(".agents/skills/aigenora/SKILL.md");

    let checked = run_in(data.path(), &["skill", "check", "--json"]);
    assert!(checked.status.success(), "{checked:?}");
    let checked: Value = serde_json::from_slice(&checked.stdout).unwrap();
    let places: Vec<&str> = checked
        .as_array()
        .unwrap()
        .iter()
        .map(|one| one["skill_md"].as_str().unwrap())
        .collect();
    // Each copy once, the most recently installed last.
    assert_eq!(places, [codex.to_str().unwrap(), claude.to_str().unwrap()]);

    // One copy falls behind: check says which and fails; update brings every copy back.
    let text = std::fs::read_to_string(&codex).unwrap();
    let old = text.replacen(
        &format!("version: {}", binary_version()),
        "version: 0.0.1",
        1,
    );
    std::fs::write(&codex, old).unwrap();
    let checked = run_in(data.path(), &["skill", "check", "--json"]);
    assert_eq!(checked.status.code(), Some(1));
    let checked: Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(checked[0]["status"], "outdated");
    assert_eq!(checked[1]["status"], "current");
    let updated = run_in(data.path(), &["skill", "update", "--json"]);
    assert!(updated.status.success(), "{updated:?}");
    let updated: Value = serde_json::from_slice(&updated.stdout).unwrap();
    assert!(
        updated[0]["written"]
            .as_array()
            .is_some_and(|w| !w.is_empty()),
        "the outdated copy is rewritten: {updated}"
    );
    assert_eq!(
        updated[1]["written"],
        Value::Array(vec![]),
        "the current copy is left alone: {updated}"
    );
    assert_eq!(frontmatter_version(&codex), binary_version());
    assert!(run_in(data.path(), &["skill", "check"]).status.success());

    // A copy removed by hand makes update say so and fail, the others still updated.
    std::fs::remove_dir_all(project.path().join(".claude")).unwrap();
    let updated = run_in(data.path(), &["skill", "update"]);
    assert_eq!(updated.status.code(), Some(1), "{updated:?}");
    let out = String::from_utf8(updated.stdout).unwrap();
    assert!(out.contains("[FAILED] no guide installed at"), "{out}");
    assert!(
        out.contains(&format!("[OK] {} is already version", codex.display())),
        "{out}"
    );
    // --base without --target is refused by the parser.
    let alone = run_in(data.path(), &["skill", "check", "--base", "x"]);
    assert_eq!(alone.status.code(), Some(2));
}

/// The leaves of the command tree as the binary's own `--help` lists them.
fn leaves(path: &[String], into: &mut Vec<Vec<String>>) {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = String::from_utf8(run(&args).stdout).unwrap();
    let Some(list) = help.split("Commands:\n").nth(1) else {
        into.push(path.to_vec());
        return;
    };
    for line in list.lines().take_while(|line| line.starts_with("  ")) {
        let name = line.split_whitespace().next().unwrap();
        if name != "help" {
            leaves(&[path, &[name.to_string()]].concat(), into);
        }
    }
}

#[test]
fn the_command_reference_lists_every_command_and_flag_the_binary_takes() {
    let base = tempfile::tempdir().unwrap();
    assert_eq!(skill("install", "opencode", base.path(), &[]).0, 0);
    let reference =
        std::fs::read_to_string(base.path().join(".opencode/skills/aigenora/COMMANDS.md")).unwrap();
    let mut all = Vec::new();
    leaves(&[], &mut all);
    assert!(all.len() > 30, "{all:?}");
    let mut checked = 0;
    for leaf in all {
        let name = format!("aigenora {}", leaf.join(" "));
        let start = reference
            .find(&format!("# {name}\n"))
            .unwrap_or_else(|| panic!("{name} missing from COMMANDS.md"));
        let section = &reference[start..];
        let section = &section[..section[2..]
            .find("\n#")
            .map_or(section.len(), |end| end + 2)];
        let mut args: Vec<&str> = leaf.iter().map(String::as_str).collect();
        args.push("--help");
        let help = String::from_utf8(run(&args).stdout).unwrap();
        // Option lines: `  -q, --query <QUERY>  ...` or `      --json  ...`.
        let flags = help.lines().filter_map(|line| {
            let line = line.trim_start();
            let line = line
                .strip_prefix("-")
                .filter(|_| line.len() > 3 && &line[2..4] == ", ")
                .map_or(line, |_| &line[4..]);
            line.starts_with("--")
                .then(|| line.split_whitespace().next().unwrap())
        });
        for flag in flags {
            if ["--help", "--version", "--data-dir", "--server"].contains(&flag) {
                continue;
            }
            assert!(
                section.contains(&format!("`{flag}")),
                "{name}: {flag}\n{section}"
            );
            checked += 1;
        }
    }
    assert!(checked > 150, "only {checked} flags seen in the help texts");
}

/// Runs `aigenora --data-dir DATA [--server URL] ARGS` with the server and relay variables
/// cleared, returning the exit code and the parsed JSON.
fn agent_json(data: &Path, server: Option<&str>, args: &[&str]) -> (i32, Value) {
    let mut command = aigenora();
    command.arg("--data-dir").arg(data);
    if let Some(url) = server {
        command.args(["--server", url]);
    }
    let output = command
        .args(args)
        .env_remove("AIGENORA_SERVER")
        .env_remove("P2P_SERVER")
        .env_remove("AIGENORA_RELAY")
        .output()
        .unwrap();
    let value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{args:?}: {}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code().unwrap(), value)
}

/// The check named `name` of a `doctor --json` report.
fn finding<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|check| check["check"] == name)
        .unwrap_or_else(|| panic!("no {name} check: {report}"))
}

fn verdict<'a>(report: &'a Value, name: &str) -> &'a str {
    finding(report, name)["verdict"].as_str().unwrap()
}

#[test]
fn bootstrap_reports_the_install_and_each_step_still_to_take_with_its_command() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let base = work.path().join("project");
    let base_arg = base.to_str().unwrap();
    let args = ["bootstrap", "--offline", "--json", "--base", base_arg];
    let (code, report) = agent_json(&data, None, &args);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["version"], binary_version().as_str());
    assert_eq!(report["bundled_skill_version"], binary_version().as_str());
    assert_eq!(report["key_present"], false);
    assert_eq!(report["skill_md_path"], Value::Null);
    assert_eq!(report["data_dir"], data.to_str().unwrap());
    assert!(
        report["python"]["version"]
            .as_str()
            .unwrap()
            .starts_with('3'),
        "{report}"
    );
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_aigenora")).unwrap();
    assert_eq!(report["recommended_entrypoint"], binary.to_str().unwrap());
    let fixes: Vec<&str> = report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["fix"].as_str().unwrap())
        .collect();
    assert!(fixes.contains(&"aigenora init"), "{fixes:?}");
    let install = format!("aigenora skill install --target claude-code --base {base_arg}");
    assert!(
        fixes.iter().any(|fix| fix.starts_with(&install)),
        "{fixes:?}"
    );

    // Once the steps are taken they leave the list; the guide is reported.
    assert_eq!(agent_json(&data, None, &["init", "--json"]).0, 0);
    assert_eq!(skill("install", "codex", &base, &[]).0, 0);
    let path_with_binary = std::env::join_paths(
        std::iter::once(binary.parent().unwrap().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let output = aigenora()
        .arg("--data-dir")
        .arg(&data)
        .args(["bootstrap", "--json", "--base", base_arg])
        .env("PATH", path_with_binary)
        .env("AIGENORA_DATA_DIR", work.path().join("elsewhere"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["key_present"], true);
    assert_eq!(report["recommended_entrypoint"], "aigenora");
    assert_eq!(report["on_path"], true);
    assert_eq!(
        report["skill_md_path"],
        base.join(".agents/skills/aigenora/SKILL.md")
            .to_str()
            .unwrap()
    );
    assert_eq!(report["skill_version"], binary_version().as_str());
    assert_eq!(
        report["data_dir_default"],
        work.path().join("elsewhere").to_str().unwrap()
    );
    assert_eq!(report["issues"], Value::Array(vec![]), "{report}");
}

#[test]
fn doctor_offline_checks_the_key_interpreter_and_relay_setting_without_a_server() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    // A server URL nothing listens on: offline, it is never asked.
    let nowhere = format!("http://127.0.0.1:{}", free_port());
    let (code, report) = agent_json(&data, Some(&nowhere), &["doctor", "--offline", "--json"]);
    assert_eq!((code, &report["ok"]), (1, &Value::Bool(false)), "{report}");
    assert_eq!(verdict(&report, "key"), "problem");
    assert_eq!(finding(&report, "key")["fix"], "aigenora init");
    assert_eq!(verdict(&report, "python"), "ok");
    assert_eq!(verdict(&report, "relay"), "ok");
    assert_eq!(verdict(&report, "server"), "skipped");

    assert_eq!(agent_json(&data, None, &["init", "--json"]).0, 0);
    let (code, report) = agent_json(&data, Some(&nowhere), &["doctor", "--offline", "--json"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(verdict(&report, "key"), "ok");

    let bad_relay = aigenora()
        .arg("--data-dir")
        .arg(&data)
        .args(["doctor", "--offline"])
        .env("AIGENORA_RELAY", "ftp://relay")
        .output()
        .unwrap();
    assert_eq!(bad_relay.status.code(), Some(1));
    let text = String::from_utf8(bad_relay.stdout).unwrap();
    assert!(
        text.contains("problem  relay") && text.contains("fix: unset AIGENORA_RELAY"),
        "{text}"
    );

    // Online, the same unreachable server is a problem with its fix.
    let (code, report) = agent_json(&data, Some(&nowhere), &["doctor", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(verdict(&report, "server"), "problem");
    let fix = finding(&report, "server")["fix"].as_str().unwrap();
    assert!(
        fix.contains("aigenora server") && fix.contains(&nowhere),
        "{fix}"
    );
}

#[test]
fn doctor_asks_the_server_its_version_whether_this_key_is_registered_and_probes_its_relay() {
    let server = TestServer::start(&[]);
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let url = Some(server.url.as_str());
    assert_eq!(agent_json(&data, url, &["init", "--json"]).0, 0);
    let (code, report) = agent_json(&data, url, &["doctor", "--json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(verdict(&report, "server"), "ok");
    let detail = finding(&report, "server")["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&server.url) && detail.ends_with(&binary_version()),
        "{detail}"
    );
    assert_eq!(verdict(&report, "registered"), "problem");
    assert_eq!(
        finding(&report, "registered")["fix"],
        "aigenora register --nickname NAME"
    );
    assert_eq!(verdict(&report, "relay_reachable"), "ok");

    let register = ["register", "--nickname", "doc", "--json"];
    assert_eq!(agent_json(&data, url, &register).0, 0);
    let (code, report) = agent_json(&data, url, &["doctor", "--json"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(finding(&report, "registered")["detail"], "as doc");

    // A server that recommends a relay nobody runs: sessions would not get through.
    let dead_relay = format!("http://127.0.0.1:{}", free_port());
    let recommending = TestServer::start(&["--relay-url", &dead_relay]);
    let (code, report) = agent_json(&data, Some(&recommending.url), &["doctor", "--json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(verdict(&report, "relay_reachable"), "problem", "{report}");
    assert!(
        finding(&report, "relay_reachable")["fix"]
            .as_str()
            .unwrap()
            .contains("AIGENORA_RELAY=default")
    );
}
