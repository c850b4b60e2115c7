//! `fs-search-bounded`: reading a file a user names with a bound. Only a
//! regular file is read (a FIFO is opened without blocking and refused, a
//! device such as `/dev/zero` is refused), and never more than the
//! caller's cap is held in memory; a stream (stdin) is read to at most one
//! byte past its cap. Every crate that reads a file a user names reads it
//! here: the workbench's configs, arguments, transcripts and token files
//! (`fs-search-process`) and the tokenizer file (`fs-search-tokens`).
//!
//! Failures are `std::io::Error`s whose text says what is wrong (`not a
//! regular file (a FIFO)`, `larger than the limit of 64 MiB`), so every
//! caller's "PATH: error" message reads as one sentence.

use std::fs::{File, Metadata};
use std::io::{Error, ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::OFlag;

/// A cap as a person reads it: whole mebibytes as `N MiB`, else bytes.
fn limit_text(max: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if max >= MIB && max.checked_rem(MIB) == Some(0) {
        format!("{} MiB", max / MIB)
    } else {
        format!("{max} bytes")
    }
}

fn too_large(max: u64) -> Error {
    Error::new(
        ErrorKind::InvalidData,
        format!("larger than the limit of {}", limit_text(max)),
    )
}

fn kind_of(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The error for a file of `kind` where a regular file was wanted.
pub fn not_regular(kind: std::fs::FileType) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("not a regular file ({})", kind_of(kind)),
    )
}

/// Opens the regular file at `path` for reading, refusing anything else
/// without blocking (a FIFO with no writer included). The file and its
/// metadata, taken from the open file.
pub fn open_regular(path: &Path) -> std::io::Result<(File, Metadata)> {
    // Non-blocking, so that opening a FIFO with no writer returns at once.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    Ok((file, meta))
}

/// Reads the regular file at `path` whole, refusing anything else and
/// any file over `max` bytes (one that grows past it while read
/// included).
pub fn read_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
    if meta.len() > max {
        return Err(too_large(max));
    }
    read_stream(file, max)
}

/// As [`read_file`], as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_file(path, max)?)
        .map_err(|_| Error::new(ErrorKind::InvalidData, "not valid UTF-8"))
}

/// Reads `input` (a stream such as stdin) to its end, failing as soon as
/// it has given more than `max` bytes.
pub fn read_stream(input: impl Read, max: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    input.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read_file(&file, 5).unwrap(), b"12345");
        assert_eq!(
            read_file(&file, 4).unwrap_err().to_string(),
            "larger than the limit of 4 bytes"
        );
        assert_eq!(
            read_file(dir.path(), 5).unwrap_err().to_string(),
            "not a regular file (a directory)"
        );
        assert_eq!(
            read_file(Path::new("/dev/zero"), 1024 * 1024)
                .unwrap_err()
                .to_string(),
            "not a regular file (a character device)"
        );
        assert_eq!(
            read_stream(std::io::repeat(0), 1024 * 1024)
                .unwrap_err()
                .to_string(),
            "larger than the limit of 1 MiB"
        );
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            read_file(&fifo, 5).unwrap_err().to_string(),
            "not a regular file (a FIFO)"
        );
    }

    #[test]
    fn text_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"\xff").unwrap();
        assert_eq!(
            read_text(&file, 5).unwrap_err().to_string(),
            "not valid UTF-8"
        );
    }
}
