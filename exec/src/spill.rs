//! The local spill store: `<root>/session-{12 hex of SHA-256(session id)}/
//! {12 random hex}-{encoded name}`, directories 0700, files 0600 created
//! exclusively. The root is configured or a lazily created private
//! `<tmp>/dsh-spill-XXXXXX`.
//!
//! A root may be shared with other users (e.g. `--spill-dir /tmp/x`), so
//! the session directory is created by the store itself (0700) and used
//! only when it is a real directory owned by this user (never a planted
//! symbolic link), and files are opened with `O_NOFOLLOW` and exclusive
//! create. A refused save is an error, which the tools turn into the
//! contract's "could not be saved" footer and warning.

use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use fs_search_engine::spill::random_hex;
use fs_search_engine::spill::{SaveTextSpill, SpillError, SpillRef, SpillStore, TextPieces};
use fs_search_engine::value::resolve_lexically;

/// The local backend's retrieval hint.
pub(super) const RETRIEVAL_HINT: &str =
    "Use read with offset/limit, or grep this path to search within it.";

/// The name of the directory under the spill root that holds session
/// `session_id`'s files: `session-` and the first 12 hex digits of the
/// SHA-256 of the id (a fixed-length name whatever the id holds).
pub fn session_dir_name(session_id: &str) -> String {
    let digest = Sha256::digest(session_id.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("session-{hex}")
}

/// Encodes a file name hint as one safe path segment: `[A-Za-z0-9._-]`
/// stay, every other UTF-16 code unit becomes `~XXXX`; `""`, `.` and `..`
/// are escaped so the segment can never address a directory.
pub(super) fn encode_segment(name: &str) -> String {
    match name {
        "" => return "~".to_owned(),
        "." => return "~002E".to_owned(),
        ".." => return "~002E~002E".to_owned(),
        _ => {}
    }
    let mut out = String::with_capacity(name.len());
    let mut units = [0u16; 2];
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("~{unit:04X}"));
            }
        }
    }
    out
}

/// Saves texts under a local directory.
#[derive(Debug, Default)]
pub struct LocalSpillStore {
    root: Option<PathBuf>,
    lazy_root: OnceLock<PathBuf>,
}

impl LocalSpillStore {
    /// A store rooted at `root` (made absolute), or at a private temp
    /// directory created on first save when `None`.
    pub fn new(root: Option<&Path>) -> Self {
        Self {
            root: root.map(|r| PathBuf::from(resolve_lexically(&r.to_string_lossy()))),
            lazy_root: OnceLock::new(),
        }
    }

    fn root(&self) -> Result<PathBuf, SpillError> {
        if let Some(root) = &self.root {
            return Ok(root.clone());
        }
        if let Some(root) = self.lazy_root.get() {
            return Ok(root.clone());
        }
        let created = tempfile::Builder::new()
            .prefix("dsh-spill-")
            .rand_bytes(6)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()?
            .keep();
        // A racing save may have set it first: use whichever won.
        Ok(self.lazy_root.get_or_init(|| created).clone())
    }

    /// Writes `input.content`, then whatever `rest` writes (its byte
    /// count), to a new file; a failed write removes the file.
    fn save_blocking(
        root: &Path,
        input: &SaveTextSpill,
        rest: impl FnOnce(&mut std::fs::File) -> std::io::Result<u64>,
    ) -> Result<SpillRef, SpillError> {
        let dir = root.join(session_dir_name(&input.session_id));
        let segment = encode_segment(&input.suggested_name);
        let mut attempts = 0;
        let (path, mut file) = loop {
            // (Again) after a prune by another process removed the
            // session directory, empty, between its check and the open.
            session_dir(root, &dir)?;
            let path = dir.join(format!("{}-{segment}", random_hex(6)));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
                .open(&path)
            {
                Ok(file) => break (path, file),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotFound
                    ) && attempts < 8 =>
                {
                    attempts += 1;
                }
                Err(e) => return Err(e.into()),
            }
        };
        let written = file
            .write_all(input.content.as_bytes())
            .and_then(|()| rest(&mut file))
            .and_then(|rest_bytes| file.flush().map(|()| rest_bytes));
        let rest_bytes = match written {
            Ok(bytes) => bytes,
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                return Err(e.into());
            }
        };
        Ok(SpillRef {
            locator: path.to_string_lossy().into_owned(),
            bytes: input.content.len() as u64 + rest_bytes,
            retrieval_hint: RETRIEVAL_HINT.to_owned(),
        })
    }
}

/// What the formatting side sends the writing thread.
enum Piece {
    /// The text's next piece.
    Text(String),
    /// The whole text has been sent.
    End,
}

/// Writes the pieces as they come, handing each buffer back for reuse;
/// a text whose sender went away before its end is an error, so a
/// cancelled save leaves no truncated file.
fn write_pieces(
    file: &mut std::fs::File,
    pieces: tokio::sync::mpsc::Receiver<Piece>,
    written: std::sync::mpsc::Sender<String>,
) -> std::io::Result<u64> {
    let mut pieces = pieces;
    let mut bytes = 0;
    loop {
        match pieces.blocking_recv() {
            Some(Piece::Text(piece)) => {
                file.write_all(piece.as_bytes())?;
                bytes += piece.len() as u64;
                // The formatting side may have finished: then nobody reuses it.
                let _ = written.send(piece);
            }
            Some(Piece::End) => return Ok(bytes),
            None => {
                return Err(std::io::Error::other(
                    "the text to save ended before its last piece",
                ));
            }
        }
    }
}

/// Refuses a session directory that is a symbolic link, not a directory,
/// or not owned by the current user.
/// Creates the session directory `dir` under `root` (0700) unless it
/// exists, and checks it ([`check_session_dir`]).
fn session_dir(root: &Path, dir: &Path) -> Result<(), SpillError> {
    DirBuilder::new().recursive(true).mode(0o700).create(root)?;
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e.into()),
    }
    check_session_dir(dir)
}

fn check_session_dir(dir: &Path) -> Result<(), SpillError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir)?;
    let problem = if meta.file_type().is_symlink() {
        "is a symbolic link"
    } else if !meta.is_dir() {
        "is not a directory"
    } else if meta.uid() != nix::unistd::getuid().as_raw() {
        "is owned by another user"
    } else {
        return Ok(());
    };
    Err(SpillError::Other(format!(
        "refusing the spill directory {}: it {problem}",
        dir.display()
    )))
}

#[async_trait]
impl SpillStore for LocalSpillStore {
    async fn save_text(&self, input: SaveTextSpill) -> Result<SpillRef, SpillError> {
        let root = self.root()?;
        tokio::task::spawn_blocking(move || Self::save_blocking(&root, &input, |_| Ok(0)))
            .await
            .map_err(|e| SpillError::Other(e.to_string()))?
    }

    /// Formats the pieces here while a blocking thread writes the ones
    /// before: the text is never whole in memory, and the few piece
    /// buffers go back and forth instead of being allocated anew.
    async fn save_text_in_pieces(
        &self,
        input: SaveTextSpill,
        rest: &mut (dyn TextPieces + '_),
    ) -> Result<SpillRef, SpillError> {
        let root = self.root()?;
        let (send_piece, pieces) = tokio::sync::mpsc::channel(1);
        let (hand_back, written) = std::sync::mpsc::channel::<String>();
        let writer = tokio::task::spawn_blocking(move || {
            Self::save_blocking(&root, &input, |file| write_pieces(file, pieces, hand_back))
        });
        loop {
            let mut buffer = written.try_recv().unwrap_or_default();
            buffer.clear();
            let piece = if rest.next_piece(&mut buffer) {
                Piece::Text(buffer)
            } else {
                Piece::End
            };
            let end = matches!(piece, Piece::End);
            // A refused send means the writer stopped: its result says why.
            if send_piece.send(piece).await.is_err() || end {
                break;
            }
        }
        drop(send_piece);
        writer.await.map_err(|e| SpillError::Other(e.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn encodes_segments_like_the_original() {
        assert_eq!(encode_segment("glob-results.txt"), "glob-results.txt");
        assert_eq!(encode_segment(""), "~");
        assert_eq!(encode_segment("."), "~002E");
        assert_eq!(encode_segment(".."), "~002E~002E");
        assert_eq!(
            encode_segment("a b/~é😀"),
            "a~0020b~002F~007E~00E9~D83D~DE00"
        );
    }

    fn input(session: &str) -> SaveTextSpill {
        SaveTextSpill {
            session_id: session.into(),
            tool_name: "glob".into(),
            call_id: "c1".into(),
            label: "result".into(),
            suggested_name: "glob-results.txt".into(),
            content: "a.ts\nb.ts".into(),
        }
    }

    #[tokio::test]
    async fn saves_with_the_exact_locator_layout_and_modes() {
        let root = tempfile::tempdir().unwrap();
        let store = LocalSpillStore::new(Some(root.path()));
        let saved = store.save_text(input("session-1")).await.unwrap();
        assert_eq!(saved.bytes, 9);
        assert_eq!(saved.retrieval_hint, RETRIEVAL_HINT);
        let path = PathBuf::from(&saved.locator);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(name.len(), 12 + 1 + "glob-results.txt".len());
        assert!(
            name[..12]
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert!(name.ends_with("-glob-results.txt"));
        let digest = Sha256::digest(b"session-1");
        let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            path.parent().unwrap(),
            root.path().join(format!("session-{hex}"))
        );
        assert_eq!(session_dir_name("session-1"), format!("session-{hex}"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a.ts\nb.ts");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
    }

    #[tokio::test]
    async fn a_lazy_root_is_private_and_shared_by_saves() {
        let store = LocalSpillStore::new(None);
        let a = store.save_text(input("s")).await.unwrap();
        let b = store.save_text(input("s")).await.unwrap();
        assert_ne!(a.locator, b.locator);
        let root = Path::new(&a.locator).parent().unwrap().parent().unwrap();
        assert!(
            root.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("dsh-spill-")
        );
        assert_eq!(
            std::fs::metadata(root).unwrap().permissions().mode() & 0o777,
            0o700
        );
        std::fs::remove_dir_all(root).unwrap();
    }

    /// Pieces from a list, in order.
    struct Listed(std::vec::IntoIter<String>);

    impl TextPieces for Listed {
        fn next_piece(&mut self, out: &mut String) -> bool {
            self.0.next().map(|piece| out.push_str(&piece)).is_some()
        }
    }

    #[tokio::test]
    async fn a_text_in_pieces_is_saved_as_one_file_after_its_beginning() {
        let root = tempfile::tempdir().unwrap();
        let store = LocalSpillStore::new(Some(root.path()));
        let pieces: Vec<String> = (0..200).map(|i| format!("{i}é\n")).collect();
        let mut rest = Listed(pieces.clone().into_iter());
        let saved = store
            .save_text_in_pieces(input("s"), &mut rest)
            .await
            .unwrap();
        let expected = format!("a.ts\nb.ts{}", pieces.concat());
        assert_eq!(std::fs::read_to_string(&saved.locator).unwrap(), expected);
        assert_eq!(saved.bytes, expected.len() as u64);
        let mode = std::fs::metadata(&saved.locator)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[tokio::test]
    async fn a_text_in_pieces_refused_by_its_directory_is_an_error() {
        let store = LocalSpillStore::new(Some(Path::new("/proc/no-spill-here")));
        let mut rest = Listed(vec!["more".to_owned(); 10].into_iter());
        assert!(
            store
                .save_text_in_pieces(input("s"), &mut rest)
                .await
                .is_err()
        );
    }

    /// Files left in the one session directory under `root`.
    fn saved_files(root: &Path) -> usize {
        let dirs: Vec<_> = std::fs::read_dir(root).unwrap().collect();
        assert_eq!(dirs.len(), 1, "one session directory");
        let dir = dirs.into_iter().next().unwrap().unwrap().path();
        std::fs::read_dir(dir).unwrap().count()
    }

    #[test]
    fn a_text_whose_sender_leaves_before_its_end_is_an_error_and_no_file() {
        let root = tempfile::tempdir().unwrap();
        let (send, pieces) = tokio::sync::mpsc::channel(4);
        let (hand_back, _written) = std::sync::mpsc::channel();
        send.try_send(Piece::Text("partial".to_owned())).unwrap();
        drop(send);
        let saved = LocalSpillStore::save_blocking(root.path(), &input("s"), |file| {
            write_pieces(file, pieces, hand_back)
        });
        let error = saved.unwrap_err().to_string();
        assert_eq!(error, "the text to save ended before its last piece");
        assert_eq!(saved_files(root.path()), 0);
    }

    #[test]
    fn a_failed_write_with_an_injected_fault_leaves_no_file() {
        let root = tempfile::tempdir().unwrap();
        let saved = LocalSpillStore::save_blocking(root.path(), &input("s"), |file| {
            file.write_all(b"partial")?;
            Err(std::io::Error::other("no space left (injected)"))
        });
        assert_eq!(saved.unwrap_err().to_string(), "no space left (injected)");
        assert_eq!(saved_files(root.path()), 0);
    }

    #[tokio::test]
    async fn a_read_only_root_fails_the_save() {
        let store = LocalSpillStore::new(Some(Path::new("/proc/no-spill-here")));
        assert!(store.save_text(input("s")).await.is_err());
    }
}
