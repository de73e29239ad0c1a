//! `aigenora session list|events|abort`: this machine's session directories.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::records::{RecordedEvent, SessionStatus};
use crate::session::{EVENTS_FILE, SESSION_FILE, SessionDir, list_sessions};
use crate::spec::Role;
use crate::terminal::escape_display;

/// Lists sessions under the data dir, newest first.
pub fn list(data_dir: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
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
            dir.display()
        );
    }
    if sessions.is_empty() {
        println!("no sessions in {}", data_dir.join("sessions").display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a session's events; with `follow`, keeps printing new ones until the session is
/// over: session.json shows a final status (written after the last event), or the process
/// that ran it is gone without writing one (killed).
pub fn events(state_dir: &Path, follow: bool, as_json: bool) -> anyhow::Result<ExitCode> {
    let path = state_dir.join(EVENTS_FILE);
    if !state_dir.is_dir() {
        bail!("no session directory at {}", state_dir.display());
    }
    let mut offset = 0u64;
    let mut stdout = std::io::stdout();
    loop {
        // Looked at before reading, so every event written before the end gets printed.
        let over = FollowEnd::of(state_dir);
        if let Ok(mut file) = std::fs::File::open(&path) {
            file.seek(SeekFrom::Start(offset))
                .with_context(|| path.display().to_string())?;
            let mut text = String::new();
            file.read_to_string(&mut text)
                .with_context(|| path.display().to_string())?;
            let complete = text.rfind('\n').map_or(0, |end| end + 1);
            offset += complete as u64;
            if as_json {
                text.truncate(complete);
                stdout.write_all(crate::terminal::escape_json(text).as_bytes())?;
            } else {
                for line in text[..complete].lines() {
                    writeln!(stdout, "{}", event_line(line))?;
                }
            }
            stdout.flush()?;
        }
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

/// Whether process `pid` exists (signal 0 checks without sending anything; a process of
/// another user exists too). Asked on every poll of a follow, so no `kill` subprocess.
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false; // 0 would ask about our own process group
    }
    // SAFETY: kill with signal 0 sends nothing; it only reports whether `pid` exists.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Why following a session (`events --follow`, `snapshot --follow`) stops.
pub(super) enum FollowEnd {
    /// session.json shows a final status (written after the session's last event).
    Recorded,
    /// The process that ran the session is gone without recording an end (killed).
    ProcessGone(u32),
}

impl FollowEnd {
    /// Whether the session in `state_dir` is over, and how; `None` while it runs (or has
    /// recorded no process yet).
    pub(super) fn of(state_dir: &Path) -> Option<FollowEnd> {
        let record = SessionDir::open(state_dir).read();
        if record.is_final() {
            return Some(FollowEnd::Recorded);
        }
        let pid = record.pid?;
        (!process_exists(pid)).then_some(FollowEnd::ProcessGone(pid))
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
pub fn abort(state_dir: &PathBuf, as_json: bool) -> anyhow::Result<ExitCode> {
    let session = SessionDir::open(state_dir);
    if !state_dir.join(SESSION_FILE).is_file() {
        bail!("no session.json in {}", state_dir.display());
    }
    let record = session.read();
    if let Some(status) = record.status.filter(|status| status.is_final()) {
        bail!(
            "session in {} already ended ({status})",
            state_dir.display()
        );
    }
    let Some(pid) = record.pid else {
        bail!("session.json in {} records no pid", state_dir.display());
    };
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .context("running kill")?;
    if !status.success() {
        bail!(
            "process {pid} is not running; the session in {} is stale",
            state_dir.display()
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_process_exists_and_a_reaped_one_does_not() {
        assert!(process_exists(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_exists(pid));
        assert!(!process_exists(0));
        assert!(!process_exists(u32::MAX));
    }
}
