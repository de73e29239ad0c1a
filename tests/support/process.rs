//! A child process under test: stdout and stderr collected as they arrive, stdin open for
//! interactive input, bounded waits, and SIGKILL on drop so a failing test leaves nothing
//! running.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running process.
pub struct Proc {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

/// How a process ended.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Drains `source` to the end (never leaving the child blocked on a full pipe).
fn collect(source: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(source);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&line));
            line.clear();
        }
    })
}

impl Proc {
    /// Spawns `command` with piped stdin, stdout and stderr.
    pub fn spawn(name: &str, mut command: Command) -> Proc {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let (stdout, stderr) = (Arc::default(), Arc::default());
        let readers = vec![
            collect(child.stdout.take().unwrap(), Arc::clone(&stdout)),
            collect(child.stderr.take().unwrap(), Arc::clone(&stderr)),
        ];
        Proc {
            name: name.to_string(),
            stdin: child.stdin.take(),
            child,
            stdout,
            stderr,
            readers,
        }
    }

    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    fn describe(&self) -> String {
        format!(
            "{} stdout:\n{}\n{} stderr:\n{}",
            self.name,
            self.stdout(),
            self.name,
            self.stderr.lock().unwrap()
        )
    }

    /// Waits for a stdout line containing `needle` and returns it. Panics if the process
    /// exits first or `limit` passes.
    pub fn wait_for_line(&self, needle: &str, limit: Duration) -> String {
        let started = Instant::now();
        loop {
            if let Some(line) = self.stdout().lines().find(|l| l.contains(needle)) {
                return line.to_string();
            }
            if started.elapsed() >= limit {
                panic!("no `{needle}` within {limit:?}\n{}", self.describe());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// One line per thread of the running process: its name, state, kernel wait channel and
    /// current system call (from /proc; a failure message says where a process hangs).
    pub fn threads(&self) -> String {
        let tasks = format!("/proc/{}/task", self.pid());
        let Ok(entries) = std::fs::read_dir(&tasks) else {
            return format!("(no {tasks}: the process has exited)");
        };
        let mut lines: Vec<String> = entries
            .flatten()
            .map(|task| {
                let read = |name: &str| {
                    std::fs::read_to_string(task.path().join(name))
                        .unwrap_or_default()
                        .trim()
                        .to_string()
                };
                format!(
                    "  {} {} state {} wchan {} syscall {}",
                    task.file_name().to_string_lossy(),
                    read("comm"),
                    state_in_stat(&read("stat")).unwrap_or('?'),
                    read("wchan"),
                    read("syscall").split(' ').next().unwrap_or("?")
                )
            })
            .collect();
        lines.sort();
        lines.join("\n")
    }

    /// SIGTERM (a graceful stop), then [`finish`](Self::finish) within `limit`.
    pub fn terminate(self, limit: Duration) -> Finished {
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "SIGTERM to {}", self.name);
        self.finish(limit)
    }

    /// Writes one line to the process's stdin.
    pub fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// SIGKILL (as a crash or an OOM kill would) and reap: no zombie left for liveness checks
    /// to see.
    pub fn kill_and_reap(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Waits for the process to exit (closing its stdin first). Kills it and panics when it
    /// is still running after `limit`.
    pub fn finish(mut self, limit: Duration) -> Finished {
        self.stdin.take();
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() >= limit {
                let threads = self.threads();
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "{} still running after {limit:?}; its threads:\n{threads}\n{}",
                    self.name,
                    self.describe()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        Finished {
            status,
            stdout: self.stdout(),
            stderr: self.stderr.lock().unwrap().clone(),
        }
    }

    /// Like [`finish`](Self::finish), and the process must have exited 0.
    pub fn succeed(self, limit: Duration) -> Finished {
        let name = self.name.clone();
        let finished = self.finish(limit);
        assert!(
            finished.status.success(),
            "{name} failed ({}):\n{}\n{}",
            finished.status,
            finished.stdout,
            finished.stderr
        );
        finished
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The state letter of a process or thread (`R`, `S`, `Z`, ...) in the text of its
/// `/proc/.../stat`: the first field after the parenthesised name, which may hold spaces.
pub fn state_in_stat(stat: &str) -> Option<char> {
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
}

/// Kilobytes of resident memory (`VmRSS`, or the peak `VmHWM`) of a live process.
pub fn memory_kib(pid: u64, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}
