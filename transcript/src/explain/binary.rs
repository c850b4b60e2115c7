//! rg's binary rule for files it finds by walking: a NUL byte makes rg
//! stop reading the file there (its default `--binary` handling of
//! implicitly searched files). A file that starts with a UTF-16 byte-order
//! mark is transcoded by rg first, so its NULs do not count.

use std::io::Read;
use std::path::Path;

/// Bytes read at a time (rg's own buffer size).
const CHUNK: usize = 64 * 1024;

/// The offset of the first NUL byte rg would see in `path`, if any.
pub(super) fn first_nul(path: &Path) -> std::io::Result<Option<u64>> {
    let mut file = std::fs::File::open(path)?;
    let mut buffer = vec![0u8; CHUNK];
    let mut offset = 0u64;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buffer[..read];
        if offset == 0 && (chunk.starts_with(&[0xFF, 0xFE]) || chunk.starts_with(&[0xFE, 0xFF])) {
            return Ok(None);
        }
        if let Some(at) = memchr::memchr(0, chunk) {
            return Ok(Some(offset + at as u64));
        }
        offset += read as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_nul_is_found_past_the_first_chunk_and_a_utf16_bom_is_text() {
        let dir = tempfile::tempdir().unwrap();
        let late = dir.path().join("late.bin");
        let mut content = vec![b'a'; CHUNK + 10];
        content.push(0);
        std::fs::write(&late, &content).unwrap();
        assert_eq!(first_nul(&late).unwrap(), Some(CHUNK as u64 + 10));
        let utf16 = dir.path().join("utf16.txt");
        std::fs::write(&utf16, [0xFF, 0xFE, b'h', 0, b'i', 0]).unwrap();
        assert_eq!(first_nul(&utf16).unwrap(), None);
        let text = dir.path().join("t.txt");
        std::fs::write(&text, "plain\n").unwrap();
        assert_eq!(first_nul(&text).unwrap(), None);
    }
}
