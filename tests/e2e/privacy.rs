//! Private by default: another local user can read nothing of a session — not its hidden
//! state, not its events, not the controller's token — because every directory of a data dir
//! is 0700 and every file 0600, a data dir left open to others is tightened,
//! and no log carries the controller's token.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::net::{Background, Net};

/// Every file and directory under `root` (itself included).
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut found = vec![root.to_path_buf()];
    let mut index = 0;
    while index < found.len() {
        let path = found[index].clone();
        if path.is_dir() && !path.is_symlink() {
            for entry in std::fs::read_dir(&path).unwrap() {
                found.push(entry.unwrap().path());
            }
        }
        index += 1;
    }
    found
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// Whether the unprivileged user `nobody` can run `program args`.
fn nobody_can(program: &str, args: &[&Path]) -> bool {
    std::process::Command::new("runuser")
        .args(["-u", "nobody", "--", program])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("runuser (util-linux) runs a command as another user")
        .success()
}

#[test]
fn another_local_user_can_read_nothing_of_a_web_daemon_session() {
    assert!(
        unsafe { libc::geteuid() } == 0,
        "this test plays another local user with runuser and needs root (CI runs as root)"
    );
    let net = Net::start();
    // Another user may walk up to the data dir: only its own modes protect it.
    std::fs::set_permissions(net.work.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    // A data dir someone made with a loose umask.
    std::fs::set_permissions(&alice.dir, std::fs::Permissions::from_mode(0o755)).unwrap();

    let output = alice
        .command(&[
            "host",
            "--protocol-dir",
            "rock-paper-scissors",
            "--control-mode",
            "autonomous",
            "--web",
            "--daemon",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let hosting: Value = serde_json::from_slice(&output.stdout).unwrap();
    let host = Background {
        state_dir: PathBuf::from(hosting["state_dir"].as_str().unwrap()),
    };
    let post_id = hosting["post_id"].as_str().unwrap();
    bob.ok(&["join", post_id, "--control-mode", "autonomous"]);
    let files = host.wait_final();
    assert_eq!(files.status(), "closed");

    let token = std::fs::read_to_string(host.state_dir.join("controller.token")).unwrap();
    let token = token.trim();
    assert!(token.len() >= 32);
    let everything = walk(&alice.dir);
    assert!(
        everything.iter().any(|p| p.ends_with("snapshot.json")),
        "the hooks' state files are there to check"
    );
    for path in &everything {
        let mode = mode(path);
        assert_eq!(
            mode & 0o077,
            0,
            "{} is open to others: {mode:03o}",
            path.display()
        );
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with(".log") || name.ends_with(".jsonl") {
            let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
            assert!(
                !text.contains(token),
                "{} holds the controller token",
                path.display()
            );
        }
    }
    let log = std::fs::read_to_string(host.state_dir.join("daemon.out.log")).unwrap();
    assert!(log.contains("controller: http://127.0.0.1:"), "{log}");

    let engine_dir = everything
        .iter()
        .find(|p| p.ends_with("snapshot.json"))
        .unwrap()
        .parent()
        .unwrap();
    assert!(!nobody_can("ls", &[&alice.dir.join("sessions")]));
    assert!(!nobody_can(
        "cat",
        &[&host.state_dir.join("controller.url")]
    ));
    assert!(!nobody_can("cat", &[&engine_dir.join("snapshot.json")]));
    // The check itself works: beside the data dir, nobody reads a file meant for everyone.
    let open = net.work.path().join("open");
    std::fs::write(&open, "x").unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(nobody_can("cat", &[&open]));
}
