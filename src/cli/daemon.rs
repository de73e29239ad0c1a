//! Running a session in the foreground until it ends or is signalled, and `--daemon`: the
//! same command re-run in the background, the parent waiting for the session to get under
//! way and printing one JSON line.

use std::future::Future;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::records::{Event, SessionStatus, find_event, iso_now};
use crate::session::{SessionEnd, SessionError, SessionRecorder};
use crate::transport::{SessionDriver, close_live_endpoints};

/// What the daemon parent waits for before it reports success.
#[derive(Debug, Clone, Copy)]
pub enum Waiting {
    /// The host published its invitation (`invite_created`).
    Invitation,
    /// The guest completed the handshake (`peer_joined`), or a room's leader admitted the
    /// member (`group_member_admitted`).
    Peer,
}

impl Waiting {
    fn event_name(self) -> &'static str {
        match self {
            Waiting::Invitation => "invite_created",
            Waiting::Peer => "peer_joined (or, in a room, group_member_admitted)",
        }
    }

    /// The event waited for, once it is in the session's events.jsonl.
    fn find_in(self, dir: &SessionRecorder) -> Option<Event> {
        let types: &[&str] = match self {
            Waiting::Invitation => &["invite_created"],
            Waiting::Peer => &["peer_joined", "group_member_admitted"],
        };
        find_event(&dir.dir().events_file(), types, |event| {
            matches!(
                (self, event),
                (Waiting::Invitation, Event::InviteCreated { .. })
                    | (Waiting::Peer, Event::PeerJoined { .. })
                    | (Waiting::Peer, Event::GroupMemberAdmitted { .. })
            )
        })
    }

    fn default_timeout(self) -> Duration {
        match self {
            Waiting::Invitation => Duration::from_secs(30),
            Waiting::Peer => Duration::from_secs(60),
        }
    }

    fn status(self) -> SessionStatus {
        match self {
            Waiting::Invitation => SessionStatus::Hosting,
            Waiting::Peer => SessionStatus::Joining,
        }
    }
}

/// Runs a session on a fresh [`SessionDriver`] (this thread drives its runtime whenever the
/// session's engine does not); SIGTERM (`session abort`) or Ctrl-C ends it as aborted.
pub fn run_until_signal(
    dir: &SessionRecorder,
    desk: &super::play::SideDesk,
    session: impl Future<Output = Result<SessionEnd, SessionError>>,
) -> Result<SessionEnd, SessionError> {
    let driver =
        SessionDriver::new().map_err(|e| SessionError::io("cannot start the async runtime", e))?;
    let ended = driver.run(async {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .map_err(|e| SessionError::io("cannot watch for SIGTERM", e))?;
        // Kept alive until the abort is recorded and the connection closed.
        tokio::pin!(session);
        let why = tokio::select! {
            ended = &mut session => return ended,
            _ = terminate.recv() => "terminated (session abort)",
            _ = tokio::signal::ctrl_c() => "interrupted",
        };
        desk.cancel(why);
        Err(aborted(dir, why).await)
    });
    driver.finish();
    ended
}

/// How long an aborting process waits for its connection to close.
const ABORT_CLOSE_LIMIT: Duration = Duration::from_secs(2);

/// Records an abort as the last event and in session.json, then closes the connection so the
/// peer sees it end now (its side ends `peer_disconnected`).
async fn aborted(dir: &SessionRecorder, why: &'static str) -> SessionError {
    dir.events().emit_last(Event::SessionEnded {
        completed: Some(false),
        reason: Some("aborted".into()),
        peer_reason: None,
        error: None,
        detail: Some(why.to_string()),
    });
    let _ = dir.update(|record| {
        record.status = Some(SessionStatus::Aborted);
        record.completed = Some(false);
        record.end_reason = Some(why.to_string());
        record.ended_at = Some(iso_now());
    });
    close_live_endpoints(ABORT_CLOSE_LIMIT).await;
    SessionError::Aborted(why)
}

/// How often a `--daemon` parent looks for the event it waits for (reading only the lines
/// that can be it): it returns this soon after the session started.
const LOOK_EVERY: Duration = Duration::from_millis(10);

/// Re-runs this command in the background (writing into `dir`), waits for `waiting`, and
/// prints `{"status": "hosting"|"joining", ...}` or `{"status": "error", ...}`.
pub fn start(dir: &SessionRecorder, waiting: Waiting) -> anyhow::Result<ExitCode> {
    let executable = std::env::current_exe()?;
    let mut arguments: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--daemon")
        .collect();
    arguments.push("--internal-session-dir".into());
    arguments.push(dir.root().display().to_string());
    let log = |path: std::path::PathBuf| crate::layout::create_private_file(&path);
    let mut child = std::process::Command::new(executable)
        .args(&arguments)
        .stdin(Stdio::null())
        .stdout(log(dir.dir().daemon_out_log())?)
        .stderr(log(dir.dir().daemon_err_log())?)
        .spawn()?;
    let timeout = std::env::var("AIGENORA_DAEMON_STARTUP_TIMEOUT")
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t > 0.0)
        .map_or(waiting.default_timeout(), Duration::from_secs_f64);
    let deadline = Instant::now() + timeout;
    let failure = loop {
        if let Some(event) = waiting.find_in(dir) {
            let record = dir.read();
            let (post_id, protocol_id, session_id) = match event {
                Event::InviteCreated {
                    post_id,
                    protocol_id,
                    ..
                } => (Some(post_id), Some(protocol_id), None),
                Event::PeerJoined {
                    protocol_id,
                    session_id,
                    ..
                } => (None, Some(protocol_id), Some(session_id)),
                Event::GroupMemberAdmitted { group_id, .. } => (None, None, Some(group_id)),
                _ => (None, None, None),
            };
            let mut report = json!({
                "status": waiting.status(),
                "state_dir": dir.root(),
                "pid": child.id(),
                "post_id": post_id.or(record.post_id),
                "protocol_id": protocol_id.or(record.protocol_id),
                "control_mode": record.local_control_mode,
            });
            if let Some(session_id) = session_id {
                report["session_id"] = session_id.into();
            }
            let url = std::fs::read_to_string(dir.root().join(crate::control::web::URL_FILE));
            if let Ok(url) = url {
                report["web_url"] = url.trim().into();
            }
            println!("{}", crate::terminal::json_line(&report));
            return Ok(ExitCode::SUCCESS);
        }
        if let Ok(Some(status)) = child.try_wait() {
            break format!("process exited before {} ({status})", waiting.event_name());
        }
        if Instant::now() >= deadline {
            break format!("timeout waiting for {}", waiting.event_name());
        }
        std::thread::sleep(LOOK_EVERY);
    };
    let last_error = std::fs::read_to_string(dir.dir().daemon_err_log())
        .ok()
        .and_then(|text| {
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        });
    println!(
        "{}",
        crate::terminal::json_line(
            &json!({"status": "error", "reason": failure, "error": last_error, "state_dir": dir.root()})
        )
    );
    Ok(ExitCode::FAILURE)
}
