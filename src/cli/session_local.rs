//! `aigenora session list|events|abort`: this machine's session directories.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::layout::jsonl::{Tail, TailLine};
use crate::layout::{DataDir, SessionDir};
use crate::records::{RecordedEvent, SessionStatus};
use crate::session::process::SessionProcess;
use crate::session::{list_sessions, read_record};
use crate::spec::Role;
use crate::terminal::escape_display;

/// Lists sessions under the data dir, newest first.
pub fn list(data_dir: &DataDir, as_json: bool) -> anyhow::Result<ExitCode> {
    let sessions = list_sessions(data_dir);
    if as_json {
        let rows: Vec<Value> = sessions
            .iter()
            .map(|(dir, record)| {
                let mut row = record.to_object();
                row.insert("session_dir".into(), json!(dir));
                Value::Object(row)
            })
            .collect();
        println!("{}", crate::terminal::json_line(&rows));
        return Ok(ExitCode::SUCCESS);
    }
    for (dir, record) in &sessions {
        let shown = |text: &Option<String>| text.as_deref().unwrap_or("-").to_string();
        println!(
            "{:<10} {:<9} post {:<18} session {:<16} {}",
            record.status.map_or("-", SessionStatus::as_str),
            record.role.map_or("-", Role::as_str),
            shown(&record.post_id),
            shown(&record.session_id)
                .chars()
                .take(16)
                .collect::<String>(),
            dir.root().display()
        );
    }
    if sessions.is_empty() {
        println!("no sessions in {}", data_dir.sessions_root().display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Longest events.jsonl line printed (longer ones are someone else's; see
/// [`crate::records::Event::message_rejected`]).
const MAX_EVENT_LINE: usize = 16 << 20;

/// Prints a session's events; with `follow`, keeps printing new ones until the session is
/// over: session.json shows a final status (written after the last event), or the process
/// that ran it is gone without writing one (killed).
pub fn events(session: &SessionDir, follow: bool, as_json: bool) -> anyhow::Result<ExitCode> {
    let path = session.events_file();
    if !session.root().is_dir() {
        bail!("no session directory at {}", session.root().display());
    }
    let mut events = Tail::new(&path, MAX_EVENT_LINE);
    let mut stdout = std::io::stdout();
    loop {
        // Looked at before reading, so every event written before the end gets printed.
        let over = FollowEnd::of(session);
        for line in events.read_to_end() {
            match line {
                TailLine::Text { text, .. } if as_json => {
                    writeln!(stdout, "{}", crate::terminal::escape_json(text))?
                }
                TailLine::Text { text, .. } => writeln!(stdout, "{}", event_line(&text))?,
                TailLine::Skipped { reason, end } => {
                    eprintln!(
                        "warning: {} at byte {end}: {reason}; skipped",
                        path.display()
                    )
                }
            }
        }
        stdout.flush()?;
        if !follow {
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(end) = over {
            end.report();
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One event as a person reads it: `[12:00:01] type: summary` (the data when there is no
/// summary), control characters escaped.
fn event_line(line: &str) -> String {
    let Some(event) = RecordedEvent::parse(line) else {
        return escape_display(line).into_owned();
    };
    let time = event.ts.get(11..19).unwrap_or("--:--:--");
    let detail = match (&event.summary, &event.data) {
        (Some(summary), _) => summary.clone(),
        (None, Value::Object(data)) if data.is_empty() => String::new(),
        (None, data) => data.to_string(),
    };
    escape_display(&format!("[{time}] {}: {detail}", event.name)).into_owned()
}

/// Why following a session (`events --follow`, `snapshot --follow`) stops.
pub(super) enum FollowEnd {
    /// session.json shows a final status (written after the session's last event).
    Recorded,
    /// The process that ran the session is gone without recording an end (killed; its
    /// pid may be another process's by now).
    ProcessGone(u32),
}

impl FollowEnd {
    /// Whether the session in `session` is over, and how; `None` while it runs (or has
    /// recorded no process yet).
    pub(super) fn of(session: &SessionDir) -> Option<FollowEnd> {
        let record = read_record(session);
        if record.is_final() {
            return Some(FollowEnd::Recorded);
        }
        match SessionProcess::of(&record) {
            SessionProcess::Gone(pid) | SessionProcess::Reused(pid) => {
                Some(FollowEnd::ProcessGone(pid))
            }
            SessionProcess::Running(_) | SessionProcess::Unknown => None,
        }
    }

    /// Says on stderr why following stopped when the session did not record its end.
    pub(super) fn report(&self) {
        if let FollowEnd::ProcessGone(pid) = self {
            eprintln!(
                "session process {pid} is gone without recording an end (killed?); stopped following"
            );
        }
    }
}

/// Stops a running session (SIGTERM to its process; it records the abort itself).
pub fn abort(session: &SessionDir, as_json: bool) -> anyhow::Result<ExitCode> {
    let pid = signal_abort(session)?;
    let state_dir = session.root();
    if as_json {
        println!(
            "{}",
            json!({"status": "aborting", "pid": pid, "state_dir": state_dir})
        );
    } else {
        println!(
            "aborting the session in {} (pid {pid})",
            state_dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Sends SIGTERM to the process of the running session in `session`; its pid.
pub fn signal_abort(session: &SessionDir) -> anyhow::Result<u32> {
    let state_dir = session.root();
    if !session.holds_a_session() {
        bail!("no session.json in {}", state_dir.display());
    }
    let record = read_record(session);
    if let Some(status) = record.status.filter(|status| status.is_final()) {
        bail!(
            "session in {} already ended ({status})",
            state_dir.display()
        );
    }
    let pid = match SessionProcess::of(&record) {
        SessionProcess::Running(pid) => pid,
        SessionProcess::Unknown => bail!("session.json in {} records no pid", state_dir.display()),
        SessionProcess::Gone(pid) => bail!(
            "process {pid} is not running; the session in {} is stale",
            state_dir.display()
        ),
        SessionProcess::Reused(pid) => bail!(
            "pid {pid} now belongs to another process (it started after this session); the \
             session's own process is gone and nothing was signalled ({})",
            state_dir.display()
        ),
    };
    let pid_t = libc::pid_t::try_from(pid).context("a pid out of range")?;
    // SAFETY: kill only sends SIGTERM to the session's process, checked just above.
    if unsafe { libc::kill(pid_t, libc::SIGTERM) } != 0 {
        bail!(
            "cannot signal process {pid}: {} ({})",
            std::io::Error::last_os_error(),
            state_dir.display()
        );
    }
    Ok(pid)
}
