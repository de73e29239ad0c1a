//! The reference client (`aigenora==0.1.4`, unchanged): its interpreter in a venv (created
//! once under `target/reference-venv` unless `AIGENORA_REFERENCE_PYTHON` names one), its
//! installed package (built-in protocols and hooks), its CLI, and a reference agent as the
//! other side of a session: its own data dir from its own `init`, pointed at our server,
//! running in `--daemon` mode so it leaves a session.json to compare with ours. Its protocol
//! fixtures are read from the installed package at test time. Interop tests never skip: if
//! the reference cannot be installed, they fail with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use super::net::{Agent, Background, Net};

/// The reference client version every interop test runs against.
pub const REFERENCE_VERSION: &str = "0.1.4";

/// The Python interpreter of a venv holding the reference client.
///
/// `AIGENORA_REFERENCE_PYTHON` names an existing one (CI sets it); otherwise a venv is
/// created once under `target/reference-venv`. Interop tests never skip: if the reference
/// cannot be installed, this panics with the reason.
pub fn reference_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        if let Some(python) = std::env::var_os("AIGENORA_REFERENCE_PYTHON") {
            return PathBuf::from(python);
        }
        venv_with("reference-venv", &format!("aigenora=={REFERENCE_VERSION}"))
    })
}

/// The interpreter of a venv `target/<name>` holding `requirement` (`package==version`),
/// created and installed from PyPI once (a marker file records it), whichever test process
/// gets there first. Panics with the reason when it cannot be installed: tests never skip.
pub fn venv_with(name: &str, requirement: &str) -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(name);
    let python = venv.join("bin/python");
    let marker = venv.join(format!("{}.installed", requirement.replace("==", "-")));
    if !marker.exists() {
        let lock = venv.with_extension("lock");
        std::fs::create_dir_all(venv.parent().unwrap()).unwrap();
        let _guard = super::system::exclusive_lock(&lock);
        if !marker.exists() {
            run(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                &format!("create the venv {name}"),
            );
            run(
                Command::new(&python).args(["-m", "pip", "install", "-q", requirement]),
                &format!("install {requirement} from PyPI"),
            );
            std::fs::write(&marker, "").unwrap();
        }
    }
    python
}

/// The installed reference package directory (for its built-in protocols and hooks).
pub fn reference_package_dir() -> PathBuf {
    let output = Command::new(reference_python())
        .args([
            "-c",
            "import aigenora, os; print(os.path.dirname(aigenora.__file__))",
        ])
        .output()
        .expect("run the reference python");
    assert!(
        output.status.success(),
        "reference package not importable: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// The `aigenora` console script of the reference client.
pub fn reference_cli() -> Command {
    let python = reference_python();
    let mut command = Command::new(python);
    command.args(["-m", "aigenora"]);
    command
}

fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot {what}: {e}"));
    assert!(
        output.status.success(),
        "cannot {what}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The reference's built-in Rock-Paper-Scissors (simultaneous_round).
pub const REFERENCE_RPS: &str = "43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f";
/// The reference's built-in Guess Number (session_loop).
pub const REFERENCE_GUESS_NUMBER: &str =
    "166570eff5c0864d31ccafb9d04ea5154184542085dfa401a9c3590f6831e8c8";

/// One of the reference's sample contracts, found by its alias in the installed package's
/// `protocols/index.json`.
pub struct ReferenceContract {
    pub protocol_id: String,
    /// The package's own `spec.json` (next to its `hooks.py`).
    pub spec: PathBuf,
}

pub fn reference_contract(alias: &str) -> ReferenceContract {
    let protocols = reference_package_dir().join("protocols");
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(protocols.join("index.json")).expect("the reference's index.json"),
    )
    .expect("index.json is JSON");
    let entry = index["protocols"]
        .as_array()
        .and_then(|entries| entries.iter().find(|entry| entry["alias"] == alias))
        .unwrap_or_else(|| panic!("{alias} is not in the reference's index.json"));
    ReferenceContract {
        protocol_id: entry["protocol_id"].as_str().unwrap().to_string(),
        spec: protocols
            .join(entry["path"].as_str().unwrap())
            .join("spec.json"),
    }
}

/// `<root>/protocols/<id[0:8]>/<id[8:]>`, the library layout both clients share.
pub fn library_dir(root: &Path, protocol_id: &str) -> PathBuf {
    root.join("protocols")
        .join(&protocol_id[..8])
        .join(&protocol_id[8..])
}

/// An agent run by the reference client.
pub struct ReferenceAgent {
    pub dir: PathBuf,
    pub server: String,
    /// The network namespace its commands run in (`None`: this one).
    pub netns: Option<String>,
}

impl Net {
    /// A reference agent: `aigenora init` (which seeds its protocol library) and `register`.
    pub fn reference_agent(&self, name: &str) -> ReferenceAgent {
        let agent = ReferenceAgent {
            dir: self.work.path().join(name),
            server: self.server.url.clone(),
            netns: None,
        };
        agent.ok(&["init"]);
        agent.ok(&["register", "--nickname", name]);
        agent
    }
}

impl ReferenceAgent {
    /// `python -m aigenora SUBCOMMAND... --data-dir D REST...` with `P2P_SERVER` set: the
    /// reference only accepts `--data-dir` after the innermost subcommand.
    pub fn command(&self, args: &[&str]) -> Command {
        let depth = if args[0] == "protocol" { 2 } else { 1 };
        let mut command = super::net::command_in(self.netns.as_deref(), reference_python());
        command
            .args(["-m", "aigenora"])
            .args(&args[..depth])
            .arg("--data-dir")
            .arg(&self.dir)
            .args(&args[depth..])
            .env("P2P_SERVER", &self.server)
            .env("PYTHONUNBUFFERED", "1")
            .env_remove("AIGENORA_CONFIG")
            .env_remove("P2P_DATA_DIR");
        command
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.command(args).output().unwrap();
        assert!(
            output.status.success(),
            "reference `{}` failed: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Publishes one of the reference's own specs on our server (its `host` never does).
    pub fn register_protocol(&self, protocol_id: &str) {
        self.register_spec(&library_dir(&self.dir, protocol_id).join("spec.json"));
    }

    /// Publishes a spec file on our server through the reference's `protocol register`.
    pub fn register_spec(&self, spec: &Path) {
        self.ok(&["protocol", "register", spec.to_str().unwrap()]);
    }

    pub fn protocol_dir(&self, protocol_id: &str) -> PathBuf {
        library_dir(&self.dir, protocol_id)
    }

    /// Runs `host`/`join` with `--daemon` and returns its one JSON line and the session
    /// running in the background.
    pub fn daemon(&self, args: &[&str]) -> (Value, Background) {
        let mut args = args.to_vec();
        args.push("--daemon");
        let stdout = self.ok(&args);
        let line: Value = serde_json::from_str(stdout.lines().last().unwrap_or(""))
            .unwrap_or_else(|_| panic!("no JSON line from the reference daemon: {stdout}"));
        assert!(
            matches!(line["status"].as_str(), Some("hosting" | "joining")),
            "{line}"
        );
        let state_dir = PathBuf::from(line["state_dir"].as_str().unwrap());
        (line, Background { state_dir })
    }
}

/// Gives our agent the reference's protocol: `protocol fetch` from the server, then the
/// reference package's own hooks.py next to the fetched spec.
pub fn install_reference_protocol(agent: &Agent, protocol_id: &str) -> PathBuf {
    agent.ok(&["protocol", "fetch", protocol_id]);
    let dir = library_dir(&agent.dir, protocol_id);
    std::fs::copy(
        library_dir(&reference_package_dir(), protocol_id).join("hooks.py"),
        dir.join("hooks.py"),
    )
    .unwrap();
    dir
}
