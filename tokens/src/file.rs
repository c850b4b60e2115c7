//! Reading a `tokenizer.json` the user names with a bound: only a regular
//! file is read (a FIFO is opened without blocking and refused, a device
//! such as `/dev/zero` is refused), and never more than
//! [`MAX_FILE_BYTES`].

use std::fs::FileType;
use std::io::{Error, ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::OFlag;

/// The largest tokenizer file read: 64 MiB, ten times the embedded
/// DeepSeek V4 `tokenizer.json` (6,367,146 bytes).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The bytes of the regular file at `path`, at most `max` of them.
pub(crate) fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    // Non-blocking, so that opening a FIFO with no writer returns at once.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("not a regular file ({})", kind_name(meta.file_type())),
        ));
    }
    let too_large = || {
        Error::new(
            ErrorKind::InvalidData,
            format!("larger than the limit of {max} bytes"),
        )
    };
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    // The file may grow after the size check: read one byte past the cap
    // at most, to tell.
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

fn kind_name(kind: FileType) -> &'static str {
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
        "an unknown kind"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_within_the_cap_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.json");
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read_bounded(&file, 5).unwrap(), b"12345");
        assert_eq!(
            read_bounded(&file, 4).unwrap_err().to_string(),
            "larger than the limit of 4 bytes"
        );
        assert_eq!(
            read_bounded(dir.path(), 5).unwrap_err().to_string(),
            "not a regular file (a directory)"
        );
    }

    #[test]
    fn the_embedded_tokenizer_fits_the_cap() {
        let json = crate::embedded_json().unwrap();
        assert!((json.len() as u64) * 10 <= MAX_FILE_BYTES, "{}", json.len());
    }
}
