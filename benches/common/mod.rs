//! Helpers shared by the benchmark programs.

pub mod mcp;

/// CPU seconds (user + system, all threads) a process has used, from /proc/PID/stat.
pub fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Linux reports these in USER_HZ, which is 100 on every architecture it supports.
    (ticks(11) + ticks(12)) / 100.0
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` writes them (empty if unreadable).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The reference client's Python: `$AIGENORA_REFERENCE_PYTHON`, or the venv the tests
/// install.
pub fn reference_python() -> String {
    std::env::var("AIGENORA_REFERENCE_PYTHON").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/target/reference-venv/bin/python"
        )
        .into()
    })
}

/// Resident memory of a process in KiB (`VmRSS` of /proc/PID/status; 0 if unreadable).
pub fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The reference package's protocol directory whose hash starts with `prefix` (the reference
/// client is installed by the tests, or named by `$AIGENORA_REFERENCE_PYTHON`).
pub fn reference_protocol_dir(prefix: &str) -> std::path::PathBuf {
    let python = reference_python();
    let output = std::process::Command::new(python)
        .args([
            "-c",
            "import aigenora, os; print(os.path.dirname(aigenora.__file__))",
        ])
        .output()
        .expect("the reference client is installed (run the tests once)");
    let package = std::path::PathBuf::from(String::from_utf8(output.stdout).unwrap().trim());
    std::fs::read_dir(package.join("protocols").join(prefix))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
}

/// The value at fraction `p` (0 to 1) of sorted durations, in milliseconds.
pub fn percentile_ms(sorted: &[std::time::Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

/// Our community server's configuration for a benchmark on loopback: a SQLite database at
/// `database`, registration's proof of work at its easiest, no rate limits.
pub fn server_config(database: &std::path::Path) -> aigenora::server::ServerConfig {
    let mut config = aigenora::server::ServerConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        aigenora::server::sqlite_url(database),
    );
    config.pow_difficulty = 1;
    config.rates = aigenora::server::config::RateLimits {
        per_key: None,
        per_address: None,
    };
    config
}

/// Initialises loaded hooks as `role` in autonomous control (no decision channel, no desk),
/// with `options` and their state in `state_dir`: how every benchmark starts its hooks.
pub fn init_autonomous(
    hooks: &mut aigenora::hooks::python_hooks::PythonHooks,
    options: &serde_json::Map<String, serde_json::Value>,
    role: aigenora::spec::Role,
    state_dir: &std::path::Path,
) {
    use aigenora::hooks::Hooks;
    hooks
        .init(&aigenora::hooks::InitContext {
            options,
            role,
            args: &[],
            state_dir,
            decision: None,
            pass_decision: true,
            timing: None,
            desk: None,
        })
        .unwrap();
}
