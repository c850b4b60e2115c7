//! A real OpenSSH server for tests (`/usr/sbin/sshd`), on a free loopback
//! port, with a temporary host key, user key and `authorized_keys`, and a
//! private client config (`ssh -F`) that reaches it as host `wbtest`;
//! everything lives in one temporary directory, removed on drop once the
//! server is killed. Shared by the engine's and the workbench's tests.
#![allow(unreachable_pub, dead_code)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server program the tests need.
pub const SSHD: &str = "/usr/sbin/sshd";

/// The host alias the client config names.
pub const HOST: &str = "wbtest";

/// A running test server.
pub struct TestSshd {
    child: Child,
    dir: tempfile::TempDir,
}

fn keygen(file: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(file)
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "ssh-keygen failed");
}

impl TestSshd {
    /// A started server, or `None` (with a message on stderr) when
    /// `/usr/sbin/sshd` is not installed.
    pub fn start() -> Option<Self> {
        let path = std::env::var("PATH")
            .ok()
            .filter(|p| !p.is_empty() && !p.contains(char::is_whitespace));
        Self::start_with_path(path.as_deref())
    }

    /// A started server whose sessions get `path` as their `PATH` (none:
    /// sshd's default), or `None` as [`TestSshd::start`].
    pub fn start_with_path(path: Option<&str>) -> Option<Self> {
        Self::start_with(path, "")
    }

    /// A started server as [`TestSshd::start`], its sessions' `PATH` the
    /// test's, with `extra` (lines) added to its configuration.
    pub fn start_with_config(extra: &str) -> Option<Self> {
        let path = std::env::var("PATH")
            .ok()
            .filter(|p| !p.is_empty() && !p.contains(char::is_whitespace));
        Self::start_with(path.as_deref(), extra)
    }

    fn start_with(path: Option<&str>, extra: &str) -> Option<Self> {
        if !Path::new(SSHD).exists() {
            let _ = writeln!(
                std::io::stderr(),
                "skipped: {SSHD} is not installed (apt-get install openssh-server)"
            );
            return None;
        }
        // sshd refuses to start without its privilege-separation dir.
        let _ = std::fs::create_dir_all("/run/sshd");
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        keygen(&at("host_key"));
        keygen(&at("user_key"));
        std::fs::copy(at("user_key.pub"), at("authorized_keys")).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_owned();
        let server_config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nPidFile none\n\
             AuthorizedKeysFile {keys}\nStrictModes no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\n\
             MaxSessions 64\nMaxStartups 64\nLogLevel ERROR\nAcceptEnv LC_ALL\n\
             SetEnv WB_API_KEY=leak DSH_HOST=leak WB_PLAIN=kept{path}\n{extra}",
            // The host is this machine: its sessions find the rg this test
            // runs with (CI puts rg 14 or 15 first on PATH), not the one
            // of sshd's default PATH.
            path = path.map_or_else(String::new, |p| format!(" PATH={p}")),
            host_key = at("host_key").display(),
            keys = at("authorized_keys").display(),
        );
        std::fs::write(at("sshd_config"), server_config).unwrap();
        let client_config = format!(
            "Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {key}\n\
             \x20 IdentitiesOnly yes\n  UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n\
             \x20 StrictHostKeyChecking accept-new\n",
            key = at("user_key").display(),
            known = at("known_hosts").display(),
        );
        std::fs::File::create(at("ssh_config"))
            .unwrap()
            .write_all(client_config.as_bytes())
            .unwrap();
        let log = std::fs::File::create(at("sshd.log")).unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(at("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let server = Self { child, dir };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "sshd did not listen: {}",
                std::fs::read_to_string(server.dir.path().join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    /// The client config file (`ssh -F`) that reaches the server as
    /// [`HOST`].
    pub fn client_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// Stops the server and the connections it serves (a dropped
    /// connection, as far as its clients can tell; the sessions' commands
    /// are left running, as a real drop leaves them).
    pub fn stop(&mut self) {
        // Each connection's sshd is a child of the listener in a session
        // of its own.
        let listener = self.child.id().to_string();
        let connections = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let ppid = stat[stat.rfind(')')? + 1..]
                    .split_whitespace()
                    .nth(1)?
                    .to_owned();
                (ppid == listener).then(|| pid.to_string())
            });
        for pid in connections {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for TestSshd {
    fn drop(&mut self) {
        self.stop();
    }
}
