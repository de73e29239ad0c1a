//! Whether the process a session dir names is still that session's. A session records its
//! pid and start time; once it has died its pid may be reused by an unrelated process, so a
//! pid that exists is believed only when that process started before the session did.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::records::SessionRecord;

/// How far a process's start may seem to follow its session's recorded start (the boot time
/// the kernel reports is whole seconds) before the pid is taken for someone else's.
const START_SLACK: Duration = Duration::from_secs(2);

/// What became of a session's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionProcess {
    /// It runs: the pid exists and started before the session.
    Running(u32),
    /// No process has that pid any more.
    Gone(u32),
    /// A process has the pid but started after the session: the pid was reused.
    Reused(u32),
    /// The record names no pid.
    Unknown,
}

impl SessionProcess {
    /// The process of the session recorded in `record`.
    pub fn of(record: &SessionRecord) -> SessionProcess {
        let Some(pid) = record.pid else {
            return SessionProcess::Unknown;
        };
        if !process_exists(pid) {
            return SessionProcess::Gone(pid);
        }
        let session_start = record
            .started_at
            .as_deref()
            .and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok())
            .map(|at| UNIX_EPOCH + Duration::from_micros(at.timestamp_micros().max(0) as u64));
        match (process_started(pid), session_start) {
            (Some(process), Some(session)) if process > session + START_SLACK => {
                SessionProcess::Reused(pid)
            }
            _ => SessionProcess::Running(pid),
        }
    }
}

/// Whether process `pid` exists (signal 0 checks without sending anything; a process of
/// another user exists too).
pub fn process_exists(pid: u32) -> bool {
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

/// When process `pid` started, from /proc (its start in clock ticks after boot).
fn process_started(pid: u32) -> Option<SystemTime> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let ticks: u64 = after_name.split_whitespace().nth(19)?.parse().ok()?;
    let boot: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf only reads a system constant.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    let since_boot = Duration::from_millis(ticks.checked_mul(1000)? / per_second.max(1));
    Some(UNIX_EPOCH + Duration::from_secs(boot) + since_boot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::iso_now;

    fn record(pid: u32, started_at: String) -> SessionRecord {
        SessionRecord {
            pid: Some(pid),
            started_at: Some(started_at),
            ..SessionRecord::default()
        }
    }

    #[test]
    fn a_pid_is_this_sessions_only_if_its_process_started_first() {
        let me = std::process::id();
        assert_eq!(
            SessionProcess::of(&record(me, iso_now())),
            SessionProcess::Running(me)
        );
        // A session that started an hour before this process: the pid is someone else's now.
        let earlier = (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
        assert_eq!(
            SessionProcess::of(&record(me, earlier)),
            SessionProcess::Reused(me)
        );
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        assert_eq!(
            SessionProcess::of(&record(gone, iso_now())),
            SessionProcess::Gone(gone)
        );
        assert_eq!(
            SessionProcess::of(&SessionRecord::default()),
            SessionProcess::Unknown
        );
        assert!(!process_exists(0));
        assert!(!process_exists(u32::MAX));
    }
}
