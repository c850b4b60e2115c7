//! Ending a command's process group, the one mechanism behind every kill
//! (caller cancellation, the executor's timeout — and so the timeout
//! policy, which cancels the call's signal — and the stdout-cap stop):
//! SIGTERM to the group, SIGKILL once the grace period is over if a member
//! is still alive, then a bounded wait until no member is: a killed call
//! returns only when its group is gone.
//!
//! "Alive" means present in `/proc` with the group's id and not a zombie:
//! a member that has exited but waits to be reaped runs nothing. This
//! matters twice over. Our own child (the group leader) stays a zombie
//! until we reap it, and members orphaned by the leader's death are
//! reparented to the nearest subreaper or PID 1, which may never reap them
//! (a container's init often does not): `kill(-pgid, 0)` alone would count
//! such a group alive for ever. It is still the cheap first probe: when it
//! fails with `ESRCH` the group has no member at all.

use std::process::ExitStatus;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::Child;
use tokio::time::Instant;

/// How long after SIGKILL the executor waits for the group to be gone
/// before it returns anyway, with a warning naming the survivors.
pub(super) const KILL_SETTLE: Duration = Duration::from_secs(1);

/// The first pause between two probes of a dying group; it doubles up to
/// [`MAX_POLL`].
const FIRST_POLL: Duration = Duration::from_millis(1);
const MAX_POLL: Duration = Duration::from_millis(20);

/// Kills a run's process group (SIGKILL) when dropped while armed: a run
/// whose future is dropped before it ended the group (a quitting TUI, a
/// runtime shutting down) leaves no process behind. Never armed for pid 0
/// or 1, which `killpg` would read as our own group or init's.
pub(super) struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    pub(super) fn new(pgid: Pid) -> Self {
        Self {
            pgid: (pgid.as_raw() > 1).then_some(pgid),
        }
    }

    /// The run has ended the group as it should: nothing to do on drop.
    pub(super) fn disarm(mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

/// The pids of the group's members that are still alive (not zombies).
pub(super) fn live_members(pgid: Pid) -> Vec<i32> {
    if killpg(pgid, None) == Err(Errno::ESRCH) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        // No /proc to tell zombies apart: any member counts as alive.
        return vec![pgid.as_raw()];
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| is_live_member(pid, pgid))
        .collect()
}

/// Whether `/proc/<pid>/stat` shows a running (non-zombie) member of `pgid`.
fn is_live_member(pid: i32, pgid: Pid) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
    let Some(rest) = stat.rfind(')').map(|at| &stat[at + 1..]) else {
        return false;
    };
    let mut fields = rest.split_whitespace();
    let state = fields.next();
    let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
    pgrp == Some(pgid.as_raw()) && !matches!(state, Some("Z" | "X" | "x"))
}

/// Waits until no member of the group is alive or `deadline` passes;
/// returns the members still alive then (empty when the group is gone).
pub(super) async fn wait_until_gone(pgid: Pid, deadline: Instant) -> Vec<i32> {
    let mut pause = FIRST_POLL;
    loop {
        let live = live_members(pgid);
        let now = Instant::now();
        if live.is_empty() || now >= deadline {
            return live;
        }
        tokio::time::sleep(pause.min(deadline.saturating_duration_since(now))).await;
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// The warning for members that outlived [`KILL_SETTLE`] after SIGKILL.
pub(super) fn survivors_warning(pgid: Pid, survivors: &[i32]) -> String {
    let pids: Vec<String> = survivors.iter().map(i32::to_string).collect();
    format!(
        "bash-local: process group {pgid} still has live member(s) {} {} ms after SIGKILL; returning without them",
        pids.join(", "),
        KILL_SETTLE.as_millis()
    )
}

/// Ends `child`'s process group `pgid`: SIGTERM (to the child alone if the
/// group signal fails), then, once `grace` is over and if any member is
/// still alive, SIGKILL; then waits up to [`KILL_SETTLE`] for every member
/// to be gone, reaping the child first. Returns the child's exit status,
/// or `None` if the child itself outlived the bound (it is then logged
/// with the other survivors and left to tokio's orphan reaper).
pub(super) async fn end_group(child: &mut Child, pgid: Pid, grace: Duration) -> Option<ExitStatus> {
    if pgid.as_raw() <= 1 {
        // No group of its own to signal (never the case for a spawned
        // child, whose pid is its group id): `killpg(0)` would hit ours.
        let _ = child.start_kill();
        return child.wait().await.ok();
    }
    if killpg(pgid, Signal::SIGTERM).is_err() {
        let _ = child.start_kill();
    }
    let deadline = Instant::now() + grace;
    // The leader first: reaping it gives its status and stops it counting.
    let _ = tokio::time::timeout_at(deadline, child.wait()).await;
    // Members outliving the leader keep the group alive.
    if wait_until_gone(pgid, deadline).await.is_empty()
        && let Ok(Some(status)) = child.try_wait()
    {
        return Some(status);
    }
    if killpg(pgid, Signal::SIGKILL).is_err() {
        let _ = child.start_kill();
    }
    let settle = Instant::now() + KILL_SETTLE;
    let status = tokio::time::timeout_at(settle, child.wait())
        .await
        .ok()
        .and_then(Result::ok);
    let survivors = wait_until_gone(pgid, settle).await;
    if !survivors.is_empty() {
        tracing::warn!("{}", survivors_warning(pgid, &survivors));
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sleep 30` in a process group of its own (spawned by std, so tokio
    /// never reaps it behind the test's back).
    fn sleeper_group(seconds: &str) -> (std::process::Child, Pid) {
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("sleep")
            .arg(seconds)
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = Pid::from_raw(i32::try_from(child.id()).unwrap());
        (child, pgid)
    }

    #[tokio::test]
    async fn a_running_member_is_live_and_a_zombie_is_not() {
        let (mut child, pgid) = sleeper_group("30");
        assert_eq!(live_members(pgid), vec![pgid.as_raw()]);
        killpg(pgid, Signal::SIGKILL).unwrap();
        // Unreaped, the child is a zombie: kill(-pgid, 0) still finds it,
        // yet the group has no live member.
        let gone = wait_until_gone(pgid, Instant::now() + Duration::from_secs(10)).await;
        assert!(gone.is_empty(), "{gone:?}");
        assert_eq!(killpg(pgid, None), Ok(()));
        child.wait().unwrap();
        assert_eq!(killpg(pgid, None), Err(Errno::ESRCH));
        assert!(live_members(pgid).is_empty());
    }

    #[tokio::test]
    async fn a_member_that_outlives_the_bound_is_named() {
        let (mut child, pgid) = sleeper_group("30");
        let started = Instant::now();
        let survivors = wait_until_gone(pgid, started + Duration::from_millis(50)).await;
        assert!(started.elapsed() >= Duration::from_millis(50));
        killpg(pgid, Signal::SIGKILL).unwrap();
        child.wait().unwrap();
        assert_eq!(survivors, vec![pgid.as_raw()]);
        assert_eq!(
            survivors_warning(pgid, &[pgid.as_raw(), 7]),
            format!(
                "bash-local: process group {pgid} still has live member(s) {pgid}, 7 1000 ms after SIGKILL; returning without them"
            )
        );
    }
}
