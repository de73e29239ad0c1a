//! A small filesystem that can be filled up: a tmpfs of a few MiB mounted in a private mount
//! namespace, so a process started inside it sees a disk that runs out of space while the
//! rest of the machine is untouched. The namespace lives as long as a holder process
//! (`unshare -m … sleep`); the test starts processes inside it with `nsenter`, and reaches its
//! files through `/proc/<holder>/root`, the holder's view of the filesystem. Everything
//! vanishes when the [`SmallDisk`] is dropped. Needs root (mounting a tmpfs).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub struct SmallDisk {
    holder: Child,
    /// Where the tmpfs is mounted, as processes inside the namespace see it.
    pub mount: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    /// A tmpfs of `bytes` in a namespace of its own. Fails the test, saying why, when the
    /// machine cannot make one (not root, no `unshare`/`nsenter`).
    pub fn new(bytes: u64) -> SmallDisk {
        assert!(
            unsafe { libc::geteuid() } == 0,
            "this test mounts a small tmpfs in a private mount namespace and needs root \
             (CI runs as root); run it as root"
        );
        let dir = tempfile::tempdir().unwrap();
        let mount = dir.path().join("disk");
        std::fs::create_dir(&mount).unwrap();
        let script = format!(
            "mount -t tmpfs -o size={bytes},mode=0700 aigenora-test {} && echo mounted && exec sleep 3600",
            mount.display()
        );
        let mut holder = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot run unshare (util-linux) to make a private mount namespace");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line.trim(), "mounted", "the tmpfs could not be mounted");
        // The shell mounted before it answered, and `exec sleep` keeps its pid.
        SmallDisk {
            holder,
            mount,
            _dir: dir,
        }
    }

    /// `path` inside the tmpfs, as the test (outside the namespace) reaches it.
    pub fn outside(&self, path: &Path) -> PathBuf {
        let inside = self.mount.join(path);
        let relative = inside.strip_prefix("/").unwrap();
        PathBuf::from(format!("/proc/{}/root", self.holder.id())).join(relative)
    }

    /// A command that runs `program` inside the namespace (nsenter execs it, so the child's
    /// pid is the program's).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("nsenter");
        command
            .arg("--target")
            .arg(self.holder.id().to_string())
            .args(["--mount", "--"])
            .arg(program);
        command
    }

    /// Free bytes on the tmpfs.
    pub fn free_bytes(&self) -> u64 {
        let path =
            std::ffi::CString::new(self.outside(Path::new("")).as_os_str().as_encoded_bytes())
                .unwrap();
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(path.as_ptr(), &mut stat) }, 0);
        stat.f_bavail as u64 * stat.f_frsize as u64
    }

    /// Fills the disk to the last byte with `filler` (created inside the tmpfs).
    pub fn fill(&self, filler: &str) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.outside(Path::new(filler))).unwrap();
        let block = vec![0xA5u8; 64 * 1024];
        let mut size = block.len();
        loop {
            match file.write(&block[..size]) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => {
                    if size == 1 {
                        break;
                    }
                    size = (size / 2).max(1);
                }
                Err(e) => panic!("filling the small disk: {e}"),
            }
        }
        assert_eq!(self.free_bytes(), 0, "the small disk is full");
    }

    /// Deletes `filler`, giving its space back.
    pub fn free(&self, filler: &str) {
        std::fs::remove_file(self.outside(Path::new(filler))).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}
