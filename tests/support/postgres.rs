//! A throwaway PostgreSQL cluster for tests: one per test process, started on first use
//! (initdb into a temp dir, a free loopback port, run as an unprivileged user when the
//! tests run as root, which PostgreSQL refuses) and stopped when the process exits; or the
//! server at `AIGENORA_TEST_POSTGRES_URL` (e.g. `postgres://postgres@127.0.0.1:5432/postgres`)
//! when set. Each [`fresh_database`] is a new empty database in it. A machine without
//! PostgreSQL fails the test with one line saying so: nothing is skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The OS user the cluster runs as when the tests run as root.
const CLUSTER_USER: &str = "aigenora-pg";
/// Cluster directories are `$TMPDIR/<prefix>XXXXXX`, holding the owning test process's id.
const DIR_PREFIX: &str = "aigenora-test-pg";
const OWNER_FILE: &str = "owner.pid";

/// Which database a test server uses (`AIGENORA_TEST_BACKEND=postgres`, default sqlite).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn from_env() -> Backend {
        match std::env::var("AIGENORA_TEST_BACKEND").as_deref() {
            Ok("postgres") => Backend::Postgres,
            Ok("sqlite") | Err(_) => Backend::Sqlite,
            Ok(other) => panic!("AIGENORA_TEST_BACKEND={other:?}: expected sqlite or postgres"),
        }
    }
}

/// A running cluster: how to reach it as the `postgres` superuser.
struct Cluster {
    /// `postgres://postgres@HOST:PORT` without a database name.
    base: String,
    psql: PathBuf,
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();
/// What the exit hook needs to stop a cluster this process started.
static STARTED: OnceLock<(PathBuf, PathBuf, Option<&'static str>)> = OnceLock::new();

/// The URL of a new, empty database.
pub fn fresh_database() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let cluster = CLUSTER.get_or_init(start_cluster);
    let name = format!(
        "test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    let out = Command::new(&cluster.psql)
        .arg(format!("{}/postgres", cluster.base))
        .args(["-v", "ON_ERROR_STOP=1", "-q", "-c"])
        .arg(format!("CREATE DATABASE {name}"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run psql: {e}"));
    assert!(
        out.status.success(),
        "CREATE DATABASE failed: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    format!("{}/{name}", cluster.base)
}

fn start_cluster() -> Cluster {
    let psql = postgres_bin("psql");
    if let Ok(url) = std::env::var("AIGENORA_TEST_POSTGRES_URL") {
        let base = url
            .rsplit_once('/')
            .filter(|(scheme, _)| scheme.contains("//") && !scheme.ends_with('/'))
            .map(|(base, _)| base.to_string())
            .unwrap_or_else(|| {
                panic!("AIGENORA_TEST_POSTGRES_URL={url:?}: expected postgres://USER@HOST:PORT/DB")
            });
        return Cluster { base, psql };
    }
    let initdb = postgres_bin("initdb");
    let pg_ctl = postgres_bin("pg_ctl");
    let user = (unsafe { libc::geteuid() } == 0).then(|| {
        ensure_user();
        CLUSTER_USER
    });
    let as_user = |program: &Path| match user {
        Some(user) => {
            let mut command = Command::new("runuser");
            command.args(["-u", user, "--"]).arg(program);
            command
        }
        None => Command::new(program),
    };
    stop_abandoned_clusters(&pg_ctl, &as_user);
    let dir = tempfile::Builder::new()
        .prefix(DIR_PREFIX)
        .tempdir()
        .unwrap()
        .keep();
    std::fs::write(dir.join(OWNER_FILE), std::process::id().to_string()).unwrap();
    if let Some(user) = user {
        run(Command::new("chown").arg(user).arg(&dir), "chown");
    }
    let data = dir.join("data");
    run(
        as_user(&initdb).arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ]),
        "initdb",
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // fsync off: test data need not survive a power loss, and the box is shared.
    let options = format!(
        "-c listen_addresses=127.0.0.1 -p {port} -k {} -c max_connections=800 -c fsync=off \
         -c full_page_writes=off -c shared_buffers=64MB",
        dir.display()
    );
    STARTED
        .set((pg_ctl.clone(), data.clone(), user))
        .expect("one cluster per process");
    run(
        as_user(&pg_ctl)
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.join("log"))
            .args(["-w", "-o", &options, "start"]),
        "pg_ctl start",
    );
    unsafe { libc::atexit(stop_cluster) };
    Cluster {
        base: format!("postgres://postgres@127.0.0.1:{port}"),
        psql,
    }
}

/// Stops and deletes the clusters of test processes that were killed (their exit hook never
/// ran), so that interrupted runs do not leave servers behind.
fn stop_abandoned_clusters(pg_ctl: &Path, as_user: &dyn Fn(&Path) -> Command) {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for dir in entries.filter_map(|entry| Some(entry.ok()?.path())) {
        let named = dir
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with(DIR_PREFIX));
        let owner = std::fs::read_to_string(dir.join(OWNER_FILE))
            .ok()
            .and_then(|pid| pid.trim().parse::<i32>().ok());
        let Some(owner) = owner.filter(|_| named) else {
            continue;
        };
        if is_running(owner) {
            continue;
        }
        let _ = as_user(pg_ctl)
            .arg("-D")
            .arg(dir.join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Whether process `pid` runs (a zombie, killed but not yet reaped, does not).
fn is_running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| super::process::state_in_stat(&stat).is_some_and(|state| state != 'Z'))
}

/// Stops the cluster this process started (at exit) and deletes its directory.
extern "C" fn stop_cluster() {
    let Some((pg_ctl, data, user)) = STARTED.get() else {
        return;
    };
    let mut command = match user {
        Some(user) => {
            let mut command = Command::new("runuser");
            command.args(["-u", user, "--"]).arg(pg_ctl);
            command
        }
        None => Command::new(pg_ctl),
    };
    let _ = command
        .arg("-D")
        .arg(data)
        .args(["-m", "immediate", "-w", "stop"])
        .output();
    if let Some(dir) = data.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A PostgreSQL program from PATH or the distribution's `/usr/lib/postgresql/<version>/bin`.
pub fn postgres_bin(name: &str) -> PathBuf {
    let on_path = super::system::which(&[name]);
    let packaged = || {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|entry| Some(entry.ok()?.path().join("bin").join(name)))
            .filter(|candidate| candidate.is_file())
            .collect();
        versions.sort();
        versions.pop()
    };
    on_path
        .or_else(packaged)
        .or_else(|| {
            super::system::install_unless(&["postgresql"], &format!("PostgreSQL's {name}"), || {
                packaged().is_some()
            });
            packaged()
        })
        .unwrap_or_else(|| {
            panic!(
                "PostgreSQL is not installed: no {name} on PATH or in /usr/lib/postgresql/*/bin \
             (apt-get install postgresql, or set AIGENORA_TEST_POSTGRES_URL)"
            )
        })
}

fn ensure_user() {
    let exists = Command::new("id")
        .arg("-u")
        .arg(CLUSTER_USER)
        .output()
        .is_ok_and(|out| out.status.success());
    if !exists {
        run(
            Command::new("useradd").args(["-r", "-M", "-s", "/usr/sbin/nologin", CLUSTER_USER]),
            "useradd",
        );
    }
}

fn run(command: &mut Command, what: &str) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout).trim(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Runs this test binary again with `AIGENORA_TEST_BACKEND=postgres`, for the tests `filter`
/// selects (every one when empty) except `myself`, one at a time, and fails with the run's
/// tail unless it passed at least one test and failed none. This is how `cargo test` covers
/// a whole suite on both backends without a second command.
pub fn rerun_on_postgres(filter: &str, myself: &str) {
    let exe = std::env::current_exe().expect("this test binary");
    let mut command = Command::new(&exe);
    if !filter.is_empty() {
        command.arg(filter);
    }
    let out = command
        .args(["--skip", myself, "--test-threads", "1"])
        .env("AIGENORA_TEST_BACKEND", "postgres")
        .output()
        .unwrap_or_else(|e| panic!("cannot rerun {}: {e}", exe.display()));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    // What failed and why: each failure's panic and the closing list, without the servers'
    // log lines.
    let said: Vec<&str> = text
        .lines()
        .filter(|line| !line.contains(" WARN ") && !line.contains(" INFO "))
        .filter(|line| {
            line.starts_with("----")
                || line.contains("panicked at")
                || line.starts_with("    ")
                || line.starts_with("test result")
                || line.starts_with("failures:")
                || line.contains("left:")
                || line.contains("right:")
                || line.starts_with("assertion")
        })
        .filter(|line| !line.trim_start().starts_with("at ") && !line.contains(": 0x"))
        .collect();
    let passed = text
        .lines()
        .filter_map(|line| line.strip_prefix("test result: "))
        .filter_map(|result| result.split("; ").next())
        .filter_map(|ok| ok.rsplit(' ').nth(1)?.parse::<u32>().ok())
        .sum::<u32>();
    assert!(
        out.status.success() && passed > 0,
        "the {filter:?} tests on PostgreSQL: {} passed, exit {:?}\n{}",
        passed,
        out.status.code(),
        said.join("\n")
    );
}

/// Held until dropped: tests that fire hundreds of requests at two server instances on one
/// database take turns across test processes (a suite's PostgreSQL rerun runs beside it), so
/// neither burst starves the other's database into answering 503.
pub fn one_burst_at_a_time() -> std::fs::File {
    super::system::exclusive_lock(&std::env::temp_dir().join("aigenora-test-burst.lock"))
}
