//! `aigenora protocol test`: self-play of a protocol dir or built-in, optionally with the
//! adversarial suite.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use super::GlobalArgs;
use crate::engine::Outcome;
use crate::hooks::skeleton;
use crate::selfplay::room::{RoomReport, RoomTest, ScriptedAction};
use crate::selfplay::{SelfPlay, SideReport, adversarial, stdout_display};
use crate::spec::ControlMode;
use crate::spec::flow::SelfTest;
use crate::spec::{self, Spec};

#[derive(Debug, Args)]
pub struct TestArgs {
    /// A protocol directory (spec.json + hooks.py), a built-in alias, or a contract of the
    /// library by protocol_id or well-known alias (`rps-v1`).
    pub protocol: String,
    /// Options for both sides (a JSON object checked against the spec's parameters).
    #[arg(long, value_name = "JSON")]
    pub options: Option<String>,
    /// Parent of the host-<ms>/guest-<ms> state dirs. Default: $TMPDIR/aigenora-sessions-<uid>
    /// (made 0700: yours only)
    #[arg(long, value_name = "DIR")]
    pub state_base: Option<PathBuf>,
    /// Also check that malformed guest messages are rejected before hooks see them.
    #[arg(long)]
    pub adversarial: bool,
    /// Run hooks even if hooks.py is an unfilled skeleton (testing only).
    #[arg(long)]
    pub allow_skeleton_hooks: bool,
    #[arg(long, value_enum, default_value_t = ControlMode::Hybrid)]
    pub control_mode: ControlMode,
    /// Seconds each decision window waits for a person (`session decide`, `session web`).
    /// Default: for human control as `host`/`join`; hybrid windows do not wait.
    #[arg(long, value_name = "SECONDS")]
    pub think_seconds: Option<f64>,
    /// Seconds to sleep between steps.
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    pub pace: f64,
    /// Fail if both sides have not finished within this many seconds.
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    pub timeout: u64,
    /// Print a JSON report instead of the game output.
    #[arg(long)]
    pub json: bool,
    /// Rooms: actions to play first, one JSON object per line: {"seat": N, "action": {...}}
    /// (then the hooks' proto_group_autoplay chooses).
    #[arg(long, value_name = "FILE")]
    pub actions: Option<PathBuf>,
    /// Rooms: most actions before the late join, the departure and the failover.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub actions_before_failover: usize,
    /// Rooms: most actions after the failover.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub max_actions: usize,
}

/// What `args` ask to play: a host and a guest, or a room.
enum Prepared {
    Pair(Box<SelfPlay>),
    Room(Box<RoomTest>),
}

/// The self-play `args` describe, checked and ready to run.
fn prepare(args: &TestArgs, global: &GlobalArgs) -> anyhow::Result<Prepared> {
    let dir = crate::protocols::resolve(&args.protocol, &global.data_dir())
        .map_err(anyhow::Error::msg)?;
    let spec = Spec::load_checked(&dir.join("spec.json"))?;
    let self_test = spec.capabilities().self_test;
    if self_test == SelfTest::Pair {
        spec.ensure_runnable()
            .map_err(|error| anyhow::anyhow!("{error} ({})", dir.join("spec.json").display()))?;
    }
    if self_test == SelfTest::None {
        let mode = spec.flow_mode().map_err(anyhow::Error::msg)?;
        bail!(
            "{} ({})",
            spec::SpecError::NotRunnable(mode),
            dir.join("spec.json").display()
        );
    }
    skeleton::ensure_implemented(&dir, args.allow_skeleton_hooks).map_err(anyhow::Error::msg)?;
    let options =
        spec::CheckedOptions::check(spec.value(), spec::parse_options(args.options.as_deref())?)
            .context("options")?;
    if self_test == SelfTest::Room {
        let script = match &args.actions {
            Some(path) => read_actions(path)?,
            None => Vec::new(),
        };
        return Ok(Prepared::Room(Box::new(RoomTest {
            protocol_dir: dir,
            spec,
            options: options.into_map(),
            state_base: args.state_base.clone().unwrap_or_else(default_state_base),
            script,
            first_actions: args.actions_before_failover,
            max_actions: args.max_actions,
        })));
    }
    if !(0.0..=3600.0).contains(&args.pace) {
        bail!("--pace must be between 0 and 3600 seconds");
    }
    let think = match args.think_seconds {
        Some(seconds) if !(0.0..=86_400.0).contains(&seconds) => {
            bail!("--think-seconds must be between 0 and 86400")
        }
        seconds => seconds.map(Duration::from_secs_f64),
    };
    Ok(Prepared::Pair(Box::new(SelfPlay {
        protocol_dir: dir,
        spec,
        options,
        state_base: args.state_base.clone().unwrap_or_else(default_state_base),
        control_mode: args.control_mode,
        think,
        pace: Duration::from_secs_f64(args.pace),
        timeout: Duration::from_secs(args.timeout),
        display: if args.json {
            std::sync::Arc::new(|_, _| {})
        } else {
            stdout_display()
        },
    })))
}

/// One self-play (and the adversarial suite when asked and the play passed).
struct Tested {
    host: SideReport,
    guest: SideReport,
    elapsed: Duration,
    failures: Vec<String>,
    cases: Vec<adversarial::CaseResult>,
    passed: bool,
}

fn play_and_check(play: &SelfPlay, adversarial: bool) -> anyhow::Result<Tested> {
    let started = Instant::now();
    let [host, guest] = play.run()?;
    let elapsed = started.elapsed();
    let failures: Vec<String> = [&host, &guest]
        .iter()
        .filter_map(|side| failure(side))
        .collect();
    let cases = if adversarial && failures.is_empty() {
        adversarial::run_suite(play)?
    } else {
        Vec::new()
    };
    let adversarial_failed = cases.iter().any(|c| !c.rejected);
    let passed = failures.is_empty() && !adversarial_failed && (!adversarial || !cases.is_empty());
    Ok(Tested {
        host,
        guest,
        elapsed,
        failures,
        cases,
        passed,
    })
}

impl Tested {
    fn json(&self) -> Value {
        json!({
            "passed": self.passed,
            "seconds": self.elapsed.as_secs_f64(),
            "host": side_json(&self.host),
            "guest": side_json(&self.guest),
            "adversarial": self.cases.iter().map(|c| json!({"case": c.label, "rejected": c.rejected, "detail": c.detail})).collect::<Vec<_>>(),
        })
    }
}

/// `protocol test --json` as a value (hook prints go to stderr): for callers that are not
/// a terminal, such as `aigenora mcp`.
pub fn json_report(args: &TestArgs, global: &GlobalArgs) -> anyhow::Result<Value> {
    let prepared = prepare(args, global)?;
    crate::hooks::interpreter::route_prints_to_stderr().map_err(anyhow::Error::msg)?;
    match prepared {
        Prepared::Pair(play) => Ok(play_and_check(&play, args.adversarial)?.json()),
        Prepared::Room(test) => {
            let started = Instant::now();
            let result = test.run();
            let seconds = started.elapsed().as_secs_f64();
            Ok(match &result {
                Ok(report) => json!({"passed": true, "seconds": seconds, "room": report}),
                Err(error) => {
                    json!({"passed": false, "seconds": seconds, "error": error.to_string()})
                }
            })
        }
    }
}

pub fn run(args: TestArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    if args.json {
        let report = json_report(&args, global)?;
        println!("{}", crate::terminal::json_line(&report));
        return Ok(if report["passed"] == true {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let play = match prepare(&args, global)? {
        Prepared::Pair(play) => play,
        Prepared::Room(test) => return room_text(&test),
    };
    let tested = play_and_check(&play, args.adversarial)?;
    let Tested {
        host,
        guest,
        elapsed,
        failures,
        cases,
        ..
    } = &tested;
    println!(
        "sessions: host {}  guest {}",
        host.session_dir.root().display(),
        guest.session_dir.root().display()
    );
    if !failures.is_empty() {
        bail!("protocol test failed: {}", failures.join("; "));
    }
    if args.adversarial {
        let adversarial_failed = cases.iter().filter(|c| !c.rejected).count();
        println!(
            "[adversarial] {}/{} cases rejected malformed messages",
            cases.len() - adversarial_failed,
            cases.len()
        );
        for case in cases {
            let verdict = if case.rejected { "PASS" } else { "FAIL" };
            println!("  [{verdict}] {}: {}", case.label, case.detail);
        }
        if cases.is_empty() {
            bail!("adversarial suite found no guest messages to mutate");
        }
        if adversarial_failed > 0 {
            bail!("{adversarial_failed} malformed message(s) were not rejected");
        }
    }
    println!(
        "[OK] protocol test passed ({}; {:.2} s)",
        summary(host, guest),
        elapsed.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Why a side failed the test, if it did.
fn failure(side: &SideReport) -> Option<String> {
    match &side.result {
        Err(error) => Some(format!("{} failed: {error}", side.role)),
        Ok(Outcome {
            reason: Some(reason),
            ..
        }) if ["peer_disconnected", "commit_mismatch", "balance_mismatch"]
            .contains(&reason.as_str()) =>
        {
            Some(format!("{} ended with {reason}", side.role))
        }
        Ok(_) => None,
    }
}

fn summary(host: &SideReport, guest: &SideReport) -> String {
    let state = |side: &SideReport| match &side.result {
        Ok(outcome) if outcome.completed => "completed",
        Ok(_) => "ended",
        Err(_) => "failed",
    };
    let winner = host
        .result
        .as_ref()
        .ok()
        .and_then(|o| o.winner)
        .or_else(|| guest.result.as_ref().ok().and_then(|o| o.winner));
    let winner = winner.map(|w| format!(", winner {w}")).unwrap_or_default();
    format!("host {}, guest {}{winner}", state(host), state(guest))
}

fn side_json(side: &SideReport) -> Value {
    match &side.result {
        Ok(outcome) => {
            json!({"ok": true, "completed": outcome.completed, "winner": outcome.winner, "reason": outcome.reason, "session_dir": side.session_dir, "state_dir": side.state_dir})
        }
        Err(error) => {
            json!({"ok": false, "error": error.to_string(), "session_dir": side.session_dir, "state_dir": side.state_dir})
        }
    }
}

/// The longest `--actions` file read.
const MAX_ACTIONS_FILE: u64 = 16 * 1024 * 1024;

/// `protocol test` on a room (see `selfplay::room`), as text.
fn room_text(test: &RoomTest) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let result = test.run();
    let seconds = started.elapsed().as_secs_f64();
    let report = result.map_err(|error| anyhow::anyhow!("protocol test failed: {error}"))?;
    println!("room: {}", report.dir.display());
    println!("[room] {}", room_summary(&report));
    for refusal in &report.rejected {
        println!("  [rejected] {}", crate::terminal::escape_control(refusal));
    }
    let end = match (&report.completed, &report.outcome) {
        (true, Some(outcome)) => format!(
            "room completed, outcome {}",
            crate::terminal::escape_control(outcome)
        ),
        (true, None) => "room completed".to_string(),
        (false, _) => "room still open after the test's actions".to_string(),
    };
    println!("[OK] protocol test passed ({end}; {seconds:.2} s)");
    Ok(ExitCode::SUCCESS)
}

fn room_summary(report: &RoomReport) -> String {
    let mut parts = vec![
        format!("{} members", report.members),
        format!("{} steps", report.steps),
        format!("{} envelopes verified", report.envelopes_verified),
        format!(
            "{} actions accepted, {} rejected",
            report.accepted,
            report.rejected.len()
        ),
    ];
    if report.late_join {
        parts.push("a late join".into());
    }
    if report.departure {
        parts.push("a departure".into());
    }
    match report.failover_from {
        Some(seq) => parts.push(format!("failover from step {seq}")),
        None => {
            parts.push("no failover (recovery_mode abort: the room fails with its leader)".into())
        }
    }
    if report.rejoined {
        parts.push("the old leader rejoined".into());
    }
    parts.join("; ")
}

/// `--actions`: one `{"seat", "action"}` object per line (blank lines skipped).
fn read_actions(path: &std::path::Path) -> anyhow::Result<Vec<ScriptedAction>> {
    use std::io::Read;
    let file =
        std::fs::File::open(path).with_context(|| format!("--actions {}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_ACTIONS_FILE + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("--actions {}", path.display()))?;
    if text.len() as u64 > MAX_ACTIONS_FILE {
        bail!("--actions {}: larger than 16 MiB", path.display());
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line).map_err(|error| {
                anyhow::anyhow!(
                    "--actions {}:{}: expected {{\"seat\": N, \"action\": {{...}}}}: {error}",
                    path.display(),
                    index + 1
                )
            })
        })
        .collect()
}

fn default_state_base() -> PathBuf {
    // SAFETY: getuid only reads this process's user id.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("aigenora-sessions-{uid}"))
}
