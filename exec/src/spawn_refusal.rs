//! What a local spawn of `bash -c COMMAND` (or of an rc.8 subprocess
//! run's argv) refuses before it runs, said
//! for a run that goes elsewhere (an agent in a sandbox or over ssh, a
//! launcher's program), so that it fails as the local executor's does and
//! at once: a NUL byte in the command, the working directory or the
//! environment (the standard library refuses it before forking, with
//! "nul byte found in provided data"), and an argument list the kernel's
//! `execve` refuses with `E2BIG`.
//!
//! An agent cannot say either itself: its request is read by bash, which
//! drops NUL bytes, and its `exec` of an over-long argument list fails as
//! `exit 126 … Argument list too long`, not as a failed start.
//!
//! The kernel's rule (Linux `fs/exec.c`): each string, its NUL counted,
//! is at most `MAX_ARG_STRLEN` (32 pages); and the strings of the file
//! name, the environment and argv, with a pointer for each, fit in a
//! quarter of the stack's soft limit (at most 6 MiB, at least 32 pages).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use super::shell::{SHELL, find_on_path};
use fs_search_engine::bash::BashSpec;

/// The standard library's words for a NUL byte in a spawn's input.
const NUL_REFUSED: &str = "nul byte found in provided data";

/// The kernel's `_STK_LIM` (8 MiB): argument lists take at most 3/4 of it.
const STACK_LIMIT_DEFAULT: u64 = 8 * 1024 * 1024;

/// The error the local executor's spawn of `spec` with the child
/// environment `env` would fail with before bash runs, if any.
pub(super) fn spawn_refusal(
    spec: &BashSpec,
    env: &BTreeMap<OsString, OsString>,
) -> Option<std::io::Error> {
    let has_nul = |bytes: &[u8]| bytes.contains(&0);
    // An rc.8 subprocess run spawns its argv, not `bash -c COMMAND`.
    let argv = spec.subprocess.and(spec.argv.as_ref());
    let words_have_nul = match argv {
        Some(argv) => argv.iter().any(|arg| has_nul(arg.as_bytes())),
        None => has_nul(spec.command.as_bytes()),
    };
    if words_have_nul
        || has_nul(spec.workdir.as_bytes())
        || env
            .iter()
            .any(|(name, value)| has_nul(name.as_bytes()) || has_nul(value.as_bytes()))
    {
        return Some(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            NUL_REFUSED,
        ));
    }
    if let Some(argv) = argv {
        let lengths: Vec<usize> = argv.iter().map(String::len).collect();
        let program = argv.first().map_or(0, String::len);
        let environment = env.iter().map(|(name, value)| name.len() + 1 + value.len());
        return over_exec_limits(
            program,
            &lengths,
            environment,
            page_size(),
            stack_soft_limit(),
        )
        .then(|| std::io::Error::from_raw_os_error(nix::libc::E2BIG));
    }
    let program = find_on_path(env.get(OsStr::new("PATH")).map(OsString::as_os_str))
        .map_or_else(|| SHELL.len(), |path| path.as_os_str().len());
    let argv = [SHELL.len(), "-c".len(), spec.command.len()];
    let environment = env.iter().map(|(name, value)| name.len() + 1 + value.len());
    over_exec_limits(program, &argv, environment, page_size(), stack_soft_limit())
        .then(|| std::io::Error::from_raw_os_error(nix::libc::E2BIG))
}

/// Whether `execve` refuses argv strings of lengths `argv` and
/// environment strings of lengths `env` (each without its NUL) for a
/// program whose path is `program` bytes long (module doc).
fn over_exec_limits(
    program: usize,
    argv: &[usize],
    env: impl Iterator<Item = usize>,
    page: u64,
    stack: Option<u64>,
) -> bool {
    let max_string = 32 * page;
    let env: Vec<usize> = env.collect();
    let strings = argv.iter().chain(&env);
    if strings.clone().any(|&len| len as u64 + 1 > max_string) {
        return true;
    }
    let limit = stack
        .map_or(u64::MAX, |stack| stack / 4)
        .min(STACK_LIMIT_DEFAULT / 4 * 3)
        .max(max_string);
    let pointers = (argv.len().max(1) + env.len()) as u64 * std::mem::size_of::<usize>() as u64;
    let bytes: u64 = strings.map(|&len| len as u64 + 1).sum::<u64>() + program as u64 + 1;
    limit <= pointers || bytes > limit - pointers
}

fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|size| u64::try_from(size).ok())
        .unwrap_or(4096)
}

/// The stack's soft limit, which a child inherits (`None`: unlimited).
fn stack_soft_limit() -> Option<u64> {
    use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit};
    match getrlimit(Resource::RLIMIT_STACK) {
        Ok((soft, _)) if soft != RLIM_INFINITY => Some(soft),
        Ok(_) => None,
        Err(_) => Some(STACK_LIMIT_DEFAULT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = 4096;
    const STACK: Option<u64> = Some(8 * 1024 * 1024);

    #[test]
    fn one_string_over_32_pages_is_refused_and_one_at_the_limit_is_not() {
        let at_limit = 32 * 4096 - 1;
        assert!(!over_exec_limits(
            9,
            &[4, 2, at_limit],
            [10].into_iter(),
            PAGE,
            STACK
        ));
        assert!(over_exec_limits(
            9,
            &[4, 2, at_limit + 1],
            [10].into_iter(),
            PAGE,
            STACK
        ));
        assert!(over_exec_limits(
            9,
            &[4, 2, 1],
            [at_limit + 1].into_iter(),
            PAGE,
            STACK
        ));
    }

    #[test]
    fn the_whole_list_fits_a_quarter_of_the_stack_limit() {
        // 8 MiB of stack: 2 MiB for strings and pointers.
        let env = |count: usize| std::iter::repeat_n(100_000, count);
        assert!(!over_exec_limits(9, &[4, 2, 10], env(20), PAGE, STACK));
        assert!(over_exec_limits(9, &[4, 2, 10], env(21), PAGE, STACK));
        // Unlimited: 6 MiB.
        assert!(!over_exec_limits(9, &[4, 2, 10], env(60), PAGE, None));
        assert!(over_exec_limits(9, &[4, 2, 10], env(63), PAGE, None));
    }

    #[test]
    fn a_nul_anywhere_is_refused_as_the_standard_library_refuses_it() {
        let spec = |command: &str, workdir: &str| BashSpec {
            command: command.to_owned(),
            argv: None,
            subprocess: None,
            workdir: workdir.to_owned(),
            timeout_ms: 1000,
            stdout_max_bytes: 1000,
            signal: None,
            stdin: None,
            env: None,
            dsh_env: None,
        };
        let env = |value: &str| BTreeMap::from([(OsString::from("V"), OsString::from(value))]);
        for (spec, env) in [
            (spec("a\0b", "/"), env("x")),
            (spec("ab", "/\0"), env("x")),
            (spec("ab", "/"), env("x\0")),
        ] {
            let refused = spawn_refusal(&spec, &env).map(|e| (e.kind(), e.to_string()));
            assert_eq!(
                refused,
                Some((std::io::ErrorKind::InvalidInput, NUL_REFUSED.to_owned()))
            );
        }
        assert!(spawn_refusal(&spec("ab", "/"), &env("x")).is_none());
    }
}
