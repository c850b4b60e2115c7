//! Descriptors this process inherited never reach a command: before every
//! child the executors start (bash, bubblewrap, ssh, their probes), every
//! descriptor from 3 up is marked close-on-exec.
//!
//! Whatever started this process may have left it holding descriptors
//! (`exec 7</` in a shell, a supervisor's socket): without the mark each
//! is open in every child, and `/proc/self/fd/7` in a sandbox or on an
//! agent would read through it to a directory the command must not see.
//! Descriptors this process opens itself are close-on-exec already (Rust's
//! standard library and tokio open every one so), and a child's standard
//! streams are set up after the mark, so nothing a child should have is
//! lost. The mark is one `close_range(…, CLOSE_RANGE_CLOEXEC)` call where
//! the kernel has it (Linux 5.11 and later), else one `fcntl` per open
//! descriptor; the `close_fds` crate makes it without `unsafe` here.

/// The lowest descriptor marked: 0, 1 and 2 are a child's own streams.
const FIRST_MARKED: i32 = 3;

/// Marks every descriptor of this process from 3 up close-on-exec
/// (module doc). Cheap and idempotent: the executors call it before each
/// spawn, and a front end once at its start, so that no descriptor it
/// inherited reaches a command however it is started.
pub fn mark_inherited_descriptors_close_on_exec() {
    close_fds::set_fds_cloexec_threadsafe(FIRST_MARKED, &[]);
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsRawFd, OwnedFd};

    use super::*;

    /// A descriptor without close-on-exec (a `dup`, as an inherited one
    /// is) reaches a child before the mark and not after it: the child's
    /// own list of its descriptors says so.
    #[test]
    fn a_descriptor_without_close_on_exec_no_longer_reaches_a_child() {
        let file = tempfile::tempfile().unwrap();
        let owned = OwnedFd::from(file);
        let leaky = nix::unistd::dup(&owned).unwrap();
        let number = leaky.as_raw_fd();
        let listed = |when: &str| {
            let out = std::process::Command::new("bash")
                .args(["-c", "ls /proc/$$/fd"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            (
                text.split_whitespace().any(|fd| fd == number.to_string()),
                format!("{when}: {text}"),
            )
        };
        let (before, said) = listed("before");
        assert!(before, "{said}");
        mark_inherited_descriptors_close_on_exec();
        let (after, said) = listed("after");
        assert!(!after, "{said}");
        drop(leaky);
    }
}
