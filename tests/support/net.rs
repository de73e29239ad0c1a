//! Helpers for end-to-end session tests: a real community server process, agents of ours
//! with their own data dirs driving our binary as separate processes on loopback with relays
//! disabled, and readers for what each side (ours or the reference's) leaves on disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use aigenora::layout::{DataDir, SessionDir};
use aigenora::records::{RecordedEvent, SessionRecord, SessionStatus, read_events};
use serde_json::Value;

use super::process::Proc;
use super::server::TestServer;

/// How long any one session (or process) may take before the test calls it a hang.
pub const SESSION_LIMIT: Duration = Duration::from_secs(90);

/// `host`/`join` flags for a slow end: both sides pace their moves and ping every half second.
pub const PACE_AND_HEARTBEAT: [&str; 4] = ["--pace", "1", "--heartbeat-interval", "0.5"];

/// A server process and a scratch dir for the agents of one test.
pub struct Net {
    pub server: TestServer,
    pub work: tempfile::TempDir,
}

impl Net {
    /// Our server on a free port with a fresh SQLite database and the cheapest proof of work.
    pub fn start() -> Net {
        Net::start_with(&[])
    }

    /// [`start`](Self::start) with more server flags.
    pub fn start_with(extra: &[&str]) -> Net {
        let mut flags = vec!["--pow-difficulty", "1"];
        flags.extend_from_slice(extra);
        Net {
            server: TestServer::start(&flags),
            work: tempfile::tempdir().unwrap(),
        }
    }

    pub fn url(&self) -> &str {
        &self.server.url
    }

    /// A new agent of ours: `init` and `register` in its own data dir.
    pub fn agent(&self, name: &str) -> Agent {
        let agent = Agent {
            dir: self.work.path().join(name),
            server: self.server.url.clone(),
            netns: None,
        };
        agent.ok(&["init"]);
        agent.ok(&["register", "--nickname", name]);
        agent
    }
}

/// One of our agents: a data dir and the server it talks to, from loopback or from inside a
/// network namespace of a simulated internet.
pub struct Agent {
    pub dir: PathBuf,
    pub server: String,
    /// The network namespace its commands run in (`None`: this one, on loopback).
    pub netns: Option<String>,
}

/// `program` run inside network namespace `netns` (`ip netns exec`, which execs it: the
/// child's pid is the program's), or as is.
pub fn command_in(netns: Option<&str>, program: impl AsRef<std::ffi::OsStr>) -> Command {
    match netns {
        Some(netns) => {
            let mut command = Command::new("ip");
            command.args(["netns", "exec", netns]).arg(program);
            command
        }
        None => Command::new(program),
    }
}

impl Agent {
    /// `aigenora --data-dir D --server URL ARGS`: on loopback without relays, or in its
    /// namespace with the relay the server recommends.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = command_in(self.netns.as_deref(), env!("CARGO_BIN_EXE_aigenora"));
        command
            .arg("--data-dir")
            .arg(&self.dir)
            .args(["--server", &self.server])
            .args(args);
        if self.netns.is_some() {
            command.env_remove("AIGENORA_RELAY");
        } else {
            command.env("AIGENORA_RELAY", "disabled");
        }
        command
            .env("RUST_LOG", "warn")
            .env_remove("AIGENORA_SERVER")
            .env_remove("P2P_SERVER")
            .env_remove("AIGENORA_DATA_DIR");
        command
    }

    /// Runs a short command to completion and returns its stdout, failing on a non-zero exit.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.command(args).output().unwrap();
        assert!(
            output.status.success(),
            "`aigenora {}` failed: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn public_key(&self) -> String {
        aigenora::identity::load_key_file(&DataDir::new(&self.dir))
            .unwrap()
            .public_key()
            .to_string()
    }

    /// Starts `host` and waits for its invitation; returns the process and the post id.
    pub fn host(&self, protocol: &str, extra: &[&str]) -> (Proc, String) {
        let mut args = vec!["--protocol-dir", protocol];
        args.extend_from_slice(extra);
        self.host_with(&args)
    }

    /// Starts `host ARGS` and waits for its invitation; returns the process and the post id.
    pub fn host_with(&self, args: &[&str]) -> (Proc, String) {
        let mut args = args.to_vec();
        args.insert(0, "host");
        let host = Proc::spawn("host", self.command(&args));
        let line = host.wait_for_line("post_id: ", SESSION_LIMIT);
        let post_id = line.trim_start_matches("post_id: ").trim().to_string();
        (host, post_id)
    }

    /// Starts `join POST_ID` in the foreground.
    pub fn join(&self, post_id: &str, extra: &[&str]) -> Proc {
        let mut args = vec!["join", post_id];
        args.extend_from_slice(extra);
        Proc::spawn("join", self.command(&args))
    }

    /// The session dir of this agent that holds a room (its `room.json`), once one does.
    pub fn room_session(&self) -> PathBuf {
        wait_until(SESSION_LIMIT, || {
            std::fs::read_dir(self.dir.join("sessions"))
                .ok()?
                .flatten()
                .map(|e| e.path())
                .find(|p| p.join("room.json").is_file())
        })
        .unwrap_or_else(|| panic!("{} never held a room", self.dir.display()))
    }

    /// The session dirs for `role` (`host`/`guest`), oldest first.
    pub fn session_dirs(&self, role: &str) -> Vec<PathBuf> {
        session_dirs(&self.dir, role)
    }

    /// The only session this agent had in `role`.
    pub fn session(&self, role: &str) -> SessionFiles {
        let dirs = self.session_dirs(role);
        assert_eq!(
            dirs.len(),
            1,
            "one {role} session in {}",
            self.dir.display()
        );
        SessionFiles::read(&dirs[0])
    }

    /// The server's record of a session (`session get --json`).
    pub fn server_session(&self, session_id: &str) -> Value {
        serde_json::from_str(&self.ok(&["session", "get", session_id, "--json"])).unwrap()
    }
}

/// `<data>/sessions/<role>-*` dirs, oldest first.
pub fn session_dirs(data_dir: &Path, role: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(data_dir.join("sessions"))
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.retain(|dir| {
        dir.file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with(&format!("{role}-")))
    });
    dirs.sort();
    dirs
}

/// What one side left in its session dir, read with the library's own record types:
/// session.json as a `SessionRecord` (also kept as JSON, for messages and field lookups)
/// and events.jsonl as `RecordedEvent`s (typed where this build knows the event).
#[derive(Debug, Clone)]
pub struct SessionFiles {
    pub dir: PathBuf,
    pub record: SessionRecord,
    pub info: Value,
    pub events: Vec<RecordedEvent>,
}

impl SessionFiles {
    pub fn read(dir: &Path) -> SessionFiles {
        let session = SessionDir::open(dir);
        let record = aigenora::session::read_record(&session);
        SessionFiles {
            dir: dir.to_path_buf(),
            info: Value::Object(record.to_object()),
            record,
            events: read_events(&session.events_file()),
        }
    }

    /// Re-reads until session.json shows a final status (the process may still be writing).
    pub fn wait_final(dir: &Path, limit: Duration) -> SessionFiles {
        let files = wait_until(limit, || {
            Some(SessionFiles::read(dir)).filter(Self::is_final)
        });
        files.unwrap_or_else(|| {
            let last = SessionFiles::read(dir);
            panic!(
                "no final status in {} within {limit:?}: {}\nlast events: {:?}\n{}",
                dir.display(),
                last.info,
                last.events.iter().rev().take(5).rev().collect::<Vec<_>>(),
                logs_in(dir)
            )
        })
    }

    pub fn is_final(&self) -> bool {
        self.record.is_final()
    }

    pub fn status(&self) -> &str {
        self.record.status.map_or("", SessionStatus::as_str)
    }

    pub fn field(&self, key: &str) -> &Value {
        &self.info[key]
    }

    /// The data of every event of this type, in order.
    pub fn events_of(&self, kind: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|event| event.name == kind)
            .map(|event| &event.data)
            .collect()
    }

    /// The last protocol message this side sent or received, per its events.jsonl.
    pub fn last_message(&self, direction: &str) -> Value {
        self.events_of("protocol_message")
            .into_iter()
            .rev()
            .find(|m| m["direction"] == direction)
            .map(|m| m["msg"].clone())
            .unwrap_or_else(|| panic!("no {direction} message in {}", self.dir.display()))
    }

    /// The winner a board game's final `round_result` names (`None` only for a draw),
    /// failing when the last message this side saw is not a finished game's verdict.
    pub fn board_verdict(&self) -> Option<String> {
        let verdict = self
            .events_of("protocol_message")
            .last()
            .map(|message| message["msg"].clone())
            .unwrap_or_default();
        assert_eq!(verdict["action"], "round_result", "{verdict}");
        assert_eq!(verdict["game_over"], true, "{verdict}");
        match verdict["winner"].as_str() {
            Some("none") => None,
            Some(side @ ("host" | "guest")) => Some(side.to_string()),
            _ => panic!("a verdict names host, guest or none: {verdict}"),
        }
    }
}

/// Both sides ended `closed` without an end reason and with every `session_ended` completed,
/// and the guest received the last message the host sent.
pub fn assert_clean_end(host: &SessionFiles, guest: &SessionFiles) {
    for end in [host, guest] {
        assert_eq!(end.status(), "closed", "{}", end.info);
        assert_eq!(end.field("end_reason"), &Value::Null, "{}", end.info);
        assert!(
            end.events_of("session_ended")
                .iter()
                .all(|e| e["completed"] == true),
            "{:?}",
            end.events
        );
    }
    assert_eq!(guest.last_message("received"), host.last_message("sent"));
}

/// The tail of every `*.log` file in a session dir (a failed background session's story).
fn logs_in(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    let mut text = String::new();
    for path in entries.flatten().map(|entry| entry.path()) {
        if path.extension().is_some_and(|e| e == "log") {
            let log = std::fs::read_to_string(&path).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            text.push_str(&format!("--- {} (last lines)\n", path.display()));
            for line in tail.into_iter().rev() {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}

/// A session running in the background (`--daemon`), ours or the reference's.
pub struct Background {
    pub state_dir: PathBuf,
}

impl Background {
    /// Waits for the session to end and returns its files; if its process exits without
    /// a final status, fails then (with its logs) rather than at the time limit.
    pub fn wait_final(&self) -> SessionFiles {
        self.wait_ended();
        SessionFiles::wait_final(&self.state_dir, Duration::from_secs(2))
    }

    /// [`wait_final`](Self::wait_final) for a reference session that may end fast. The
    /// reference's session.json can lose its final status: its daemon's parent process and
    /// the session process both read-modify-write the file, the parent once `peer_joined`
    /// shows up and the session at its end, so a game that ends inside the parent's update
    /// is overwritten with "running" (seen against our fast host). Once its process has
    /// exited, its `session_ended` event then stands for the end.
    pub fn wait_reference_end(&self) -> SessionFiles {
        if self.wait_ended() {
            let files = SessionFiles::read(&self.state_dir);
            if !files.is_final() && !files.events_of("session_ended").is_empty() {
                return files;
            }
        }
        SessionFiles::wait_final(&self.state_dir, Duration::from_secs(2))
    }

    /// Waits until session.json shows a final status or the session's process is gone;
    /// true when the process is gone.
    fn wait_ended(&self) -> bool {
        let probe = || {
            let files = SessionFiles::read(&self.state_dir);
            let gone = files.info["pid"]
                .as_u64()
                .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
            (gone || files.is_final()).then_some(gone)
        };
        wait_until(SESSION_LIMIT, probe).unwrap_or(false)
    }
}

impl Drop for Background {
    /// Kills the background process this test started if it has not ended (a failed test).
    fn drop(&mut self) {
        let files = SessionFiles::read(&self.state_dir);
        if let Some(pid) = files.info["pid"].as_u64()
            && files.info["ended_at"].is_null()
        {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

/// Polls `probe` every 50 ms until it yields something or `limit` passes.
pub fn wait_until<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let started = Instant::now();
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if started.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Checks what the server recorded for a session both sides ended.
pub fn assert_server_session(record: &Value, status: &str, winner: Option<&str>) {
    assert_eq!(record["status"], status, "server session: {record}");
    match winner {
        Some(winner) => {
            assert_eq!(record["result"]["outcome"], "agreed", "{record}");
            assert_eq!(record["result"]["winner"], winner, "{record}");
        }
        None => assert_eq!(record["result"]["winner"], Value::Null, "{record}"),
    }
}

/// After whatever the host went through, the real guest joins `post_id` and both play to the
/// end; the host's only peer was that guest. Returns the host's ended session.
pub fn real_guest_plays(host: Proc, hosting: &Agent, guest: &Agent, post_id: &str) -> SessionFiles {
    let joined = guest.join(post_id, &[]).succeed(SESSION_LIMIT);
    let host = host.succeed(SESSION_LIMIT);
    assert!(joined.stdout.contains("peer_joined: "), "{}", joined.stdout);
    let end = hosting.session("host");
    assert_eq!(end.status(), "closed", "{}\n{}", end.info, host.stdout);
    let peers = end.events_of("peer_joined");
    assert_eq!(peers.len(), 1, "{}", end.info);
    assert_eq!(peers[0]["peer_public_key"], guest.public_key());
    end
}

/// The post id of the fresh invitation `host` offered after `taken`.
pub fn offered_after(host: &Proc, taken: &str) -> String {
    wait_until(SESSION_LIMIT, || {
        let stdout = host.stdout();
        let mut offered = stdout
            .lines()
            .filter_map(|line| line.strip_prefix("post_id: "))
            .map(str::trim);
        offered.find(|post_id| *post_id == taken)?;
        offered.next().map(String::from)
    })
    .unwrap_or_else(|| panic!("no fresh invitation after {taken}\n{}", host.stdout()))
}
