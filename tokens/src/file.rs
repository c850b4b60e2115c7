//! The cap of a `tokenizer.json` the user names; it is read by
//! `fs_search_bounded` (a regular file only, never more than the cap).

/// The largest tokenizer file read: 64 MiB, ten times the embedded
/// DeepSeek V4 `tokenizer.json` (6,367,146 bytes).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_tokenizer_fits_the_cap() {
        let json = crate::embedded_json().unwrap();
        assert!((json.len() as u64) * 10 <= MAX_FILE_BYTES, "{}", json.len());
    }
}
