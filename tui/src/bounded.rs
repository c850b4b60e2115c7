//! Reading a file the user names (`--config @FILE`, transcripts,
//! recordings, tree manifests, a calls file on stdin) with a bound: only
//! a regular file is read (a FIFO is opened without blocking and refused,
//! a device is refused), and never more than its cap is held in memory.
//! The same rule holds for the one file the user names for appending
//! (`workbench mcp --record FILE`): only a regular file is opened.
//! Failures are `std::io::Error`s whose text says what is wrong, so every
//! caller's existing "PATH: error" message stays as it was.

use std::io::{Error, ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::OFlag;

/// The cap of a config file (`--config @FILE`).
pub const CONFIG_MAX_BYTES: u64 = 1024 * 1024;
/// The cap of a transcript, recording, calls file or tree manifest.
pub const TRANSCRIPT_MAX_BYTES: u64 = 256 * 1024 * 1024;

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

/// Reads the regular file at `path` whole, refusing anything else and
/// any file over `max` bytes.
pub fn read_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    // Non-blocking, so that opening a FIFO with no writer returns at once.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    if meta.len() > max {
        return Err(too_large(max));
    }
    read_stream(file, max)
}

fn not_regular(kind: std::fs::FileType) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("not a regular file ({})", kind_of(kind)),
    )
}

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
            read_file(Path::new("/dev/zero"), CONFIG_MAX_BYTES)
                .unwrap_err()
                .to_string(),
            "not a regular file (a character device)"
        );
        assert_eq!(
            read_stream(std::io::repeat(0), CONFIG_MAX_BYTES)
                .unwrap_err()
                .to_string(),
            "larger than the limit of 1 MiB"
        );
    }

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
}
