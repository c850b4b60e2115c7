//! `/proc` probes: the live members of a process group, this process's
//! open file descriptors, and its peak resident memory (`VmHWM`).

use std::io;

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgid: i32,
}

impl ProcInfo {
    /// A zombie (`Z`) or dead (`X`) entry is no longer running: it only
    /// waits for its parent to reap it.
    pub fn is_alive(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// `/proc/<pid>/stat` of one process, if it exists.
pub fn proc_info(pid: i32) -> Option<ProcInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself contain spaces or
    // parentheses: the fields after it start at the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(ProcInfo {
        pid,
        state,
        ppid,
        pgid,
    })
}

/// The live descendants of `pid` (following `/proc`'s parent links) and
/// their command names: the processes a command started, even after they
/// moved to process groups of their own.
pub fn descendants(pid: i32) -> Vec<(i32, String)> {
    let Ok(all) = processes(ProcInfo::is_alive) else {
        return Vec::new();
    };
    let parent: std::collections::HashMap<i32, i32> =
        all.iter().map(|info| (info.pid, info.ppid)).collect();
    let mut found = Vec::new();
    for &p in parent.keys() {
        let mut up = p;
        while let Some(&pp) = parent.get(&up) {
            if pp == pid {
                let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
                found.push((p, comm.trim().to_owned()));
                break;
            }
            up = pp;
        }
    }
    found
}

/// Every process `keep` selects, zombies included.
fn processes(keep: impl Fn(&ProcInfo) -> bool) -> io::Result<Vec<ProcInfo>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(pid) = entry?.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Some(info) = proc_info(pid).filter(&keep) {
            found.push(info);
        }
    }
    Ok(found)
}

/// Every process currently in group `pgid`, zombies included.
pub fn group_members(pgid: i32) -> io::Result<Vec<ProcInfo>> {
    processes(|info| info.pgid == pgid)
}

/// This process's child processes, zombies (unreaped children) included.
pub fn own_children() -> io::Result<Vec<ProcInfo>> {
    let me = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    processes(|info| info.ppid == me)
}

/// The members of group `pgid` that are still running.
pub fn live_group_members(pgid: i32) -> io::Result<Vec<ProcInfo>> {
    Ok(group_members(pgid)?
        .into_iter()
        .filter(ProcInfo::is_alive)
        .collect())
}

/// The number of this process's open file descriptors.
pub fn open_fd_count() -> io::Result<usize> {
    Ok(std::fs::read_dir("/proc/self/fd")?.count())
}

/// A `kB` field of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> io::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| io::Error::other(format!("no {field} in /proc/self/status")))
}

/// Peak resident set size of this process so far, in KiB.
pub fn vm_hwm_kib() -> io::Result<u64> {
    status_kib("VmHWM")
}

/// Current resident set size of this process, in KiB.
pub fn vm_rss_kib() -> io::Result<u64> {
    status_kib("VmRSS")
}

/// Kills every member of group `pgid` (cleanup after a failed test).
pub fn kill_group(pgid: i32) {
    if pgid > 1 {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .stderr(std::process::Stdio::null())
            .status();
    }
}
