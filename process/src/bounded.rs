//! The files the workbench's users name, with their caps: configs,
//! arguments, transcripts, recordings, tree manifests, a calls file on
//! stdin, `--token-file`, the file `--follow` polls. They are read by
//! `fs_search_bounded` (regular files only, never more than the cap; the
//! tokenizer file too, by `fs-search-tokens`), re-exported here. The same
//! rule holds for the one file the user names for appending (`workbench
//! mcp --record FILE`): only a regular file is opened. The files the user
//! names for output that are not regular files (a FIFO, `/dev/stdout`) are
//! written by [`write_file`], which never blocks opening a FIFO; regular
//! ones are replaced at once by [`crate::atomic_file`].

use std::io::{Error, ErrorKind};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use fs_search_bounded::not_regular;
pub use fs_search_bounded::{open_regular, read_file, read_stream, read_text};
use nix::fcntl::OFlag;

/// The cap of a config file (`--config @FILE`).
pub(crate) const CONFIG_MAX_BYTES: u64 = 1024 * 1024;
/// The cap of a transcript, recording, calls file or tree manifest.
pub const TRANSCRIPT_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// The cap of call arguments read from a file or stdin (`--args @FILE`,
/// `--args @-`): as much as one MCP message may carry.
pub(crate) const ARGS_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// The cap of a bearer token file (`--token-file`): one line.
pub const TOKEN_FILE_MAX_BYTES: u64 = 64 * 1024;

/// Opens the file at `path` for reading and appending, creating it when
/// missing; anything but a regular file is refused at once (a FIFO is
/// never waited on: it is checked before it is opened, and opened
/// without blocking).
pub fn open_for_append(path: &Path) -> std::io::Result<std::fs::File> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(not_regular(meta.file_type())),
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .custom_flags(OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    Ok(file)
}

/// Writes `bytes` to the file at `path` (created, or truncated) without
/// ever blocking in `open`: a FIFO that no process reads is refused
/// (`a FIFO with no reader`) instead of waited on. A FIFO or device that
/// is open for reading (`/dev/stdout` piped to a reader) is written as
/// usual.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(code) if code == nix::errno::Errno::ENXIO as i32 => {
                Error::new(ErrorKind::InvalidInput, "a FIFO with no reader")
            }
            _ => e,
        })?;
    // Opened: from here on writes may wait for a slow reader, as any
    // write to a pipe does.
    nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(OFlag::empty())).map_err(Error::from)?;
    std::io::Write::write_all(&mut file, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_opened_for_append_and_a_fifo_is_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rec.jsonl");
        assert!(
            open_for_append(&file)
                .unwrap()
                .metadata()
                .unwrap()
                .is_file()
        );
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            open_for_append(&fifo).unwrap_err().to_string(),
            "not a regular file (a FIFO)"
        );
        assert_eq!(
            open_for_append(Path::new("/dev/null"))
                .unwrap_err()
                .to_string(),
            "not a regular file (a character device)"
        );
        assert_eq!(
            open_for_append(dir.path()).unwrap_err().to_string(),
            "not a regular file (a directory)"
        );
    }

    #[test]
    fn writing_to_a_fifo_with_no_reader_is_refused_at_once_and_a_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let target = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(write_file(&target, b"x").map_err(|e| e.to_string()));
        });
        let written = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("write_file returns at once instead of blocking");
        assert_eq!(written, Err("a FIFO with no reader".to_owned()));
        let file = dir.path().join("out");
        std::fs::write(&file, "a longer old content").unwrap();
        write_file(&file, b"new").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
    }
}
