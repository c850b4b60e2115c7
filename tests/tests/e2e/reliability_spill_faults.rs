//! Spill faults (CONTRACT §8.3): an over-cap result whose complete text
//! cannot be saved — a spill root that cannot be written, a store failing
//! on write (a full disk), no session owner, no store at all — is still a
//! success: the footer says the result could not be saved, the canonical
//! value and card are whole, and the warning is logged on the result
//! (`ToolResult::warnings`). Real bash and rg produce the results.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use fs_search_engine::spill::{SaveTextSpill, SpillError, SpillRef};
use fs_search_engine::{ExecContext, Registry, SpillStore, ToolResult};
use fs_search_exec::{LocalBashConfig, LocalSpillStore};
use fs_search_test_support::reliability::{local_executor, registry_with};
use serde_json::json;

const GLOB_NOT_SAVED: &str = "a.txt\nb.txt\n\n(Showing 2 of 5 paths. The complete result could not be saved; narrow pattern or path to see more.)";
const GREP_NOT_SAVED: &str = "Found 2 of 5 matches\n\nlog.md\nLine 1: alpha 1\nLine 2: alpha 2\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)";

/// Five `.txt` files, oldest first `a` … `e`, and a file with five matches.
fn work_tree() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let base = SystemTime::now() - Duration::from_secs(3600);
    for (i, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        let path = work.path().join(format!("{name}.txt"));
        std::fs::write(&path, "").unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(base + Duration::from_secs(i as u64 * 10))
            .unwrap();
    }
    let lines: String = (1..=5).map(|i| format!("alpha {i}\n")).collect();
    std::fs::write(work.path().join("log.md"), lines).unwrap();
    work
}

async fn registry(work: &Path, store: Option<Arc<dyn SpillStore>>) -> Registry {
    let bash = local_executor(
        LocalBashConfig {
            cwd: Some(work.to_string_lossy().into_owned()),
            ..LocalBashConfig::default()
        },
        &[],
    )
    .unwrap();
    let config =
        json!({"sampleOverCapGlobResults": false, "globMaxResults": 2, "grepMaxMatches": 2});
    registry_with(bash, store, false, &config).await.unwrap().0
}

fn with_owner() -> ExecContext {
    ExecContext::new("call-1").with_session(Some("session-1"), None)
}

/// Both over-cap calls; each must be a whole success with the
/// could-not-save footer and exactly `warning(tool)` logged.
async fn assert_degrades(
    registry: &Registry,
    exec: &ExecContext,
    warning: impl Fn(&str) -> String,
) {
    for (tool, args, text, count) in [
        ("glob", json!({"pattern": "*.txt"}), GLOB_NOT_SAVED, 5),
        ("grep", json!({"pattern": "alpha"}), GREP_NOT_SAVED, 5),
    ] {
        let result: ToolResult = registry.call(tool, &args, exec).await;
        assert!(!result.is_error, "{result:?}");
        assert_eq!(result.text, text);
        assert_eq!(result.value.as_ref().unwrap().len(), count);
        assert!(result.meta.is_some());
        assert!(result.spill.is_none());
        assert_eq!(result.warnings, vec![warning(tool)]);
    }
}

fn save_failed(detail: &str) -> impl Fn(&str) -> String + '_ {
    move |tool| {
        format!(
            "tool-fs-search: saveText failed for {tool}: Error: {detail}; complete result not saved"
        )
    }
}

#[tokio::test]
async fn a_working_store_saves_so_the_faults_below_are_real_degradations() {
    let work = work_tree();
    let root = tempfile::tempdir().unwrap();
    let store = Arc::new(LocalSpillStore::new(Some(root.path())));
    let registry = registry(work.path(), Some(store)).await;
    let result = registry
        .call("glob", &json!({"pattern": "*.txt"}), &with_owner())
        .await;
    let spill = result.spill.as_ref().unwrap();
    assert!(result.text.ends_with(&format!(
        "Full sorted result stored at: {}. Use read with offset/limit, or grep this path to search within it.)",
        spill.locator
    )));
    assert_eq!(
        std::fs::read_to_string(&spill.locator).unwrap(),
        "a.txt\nb.txt\nc.txt\nd.txt\ne.txt"
    );
    assert!(result.warnings.is_empty());
}

#[tokio::test]
async fn a_spill_root_that_cannot_be_written_degrades_to_could_not_save() {
    let work = work_tree();
    let holder = tempfile::tempdir().unwrap();
    // A read-only directory: effective unless this user bypasses
    // permission bits (root does; the two roots below fail for root too).
    let read_only = holder.path().join("read-only");
    std::fs::create_dir(&read_only).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o555)).unwrap();
    let permissions_apply = std::fs::create_dir(read_only.join("probe")).is_err();
    // A root below a regular file, and a root on /proc, which refuses new
    // directories whoever asks.
    let file = holder.path().join("file");
    std::fs::write(&file, "").unwrap();
    let mut roots: Vec<(PathBuf, Option<&str>)> = vec![
        (file.join("spill"), Some("Not a directory (os error 20)")),
        (PathBuf::from("/proc/self/spill-root"), None),
    ];
    if permissions_apply {
        roots.push((read_only.clone(), Some("Permission denied (os error 13)")));
    } else {
        eprintln!("permission bits do not apply to this user: the 0555 root is writable");
    }
    for (root, detail) in roots {
        let store = Arc::new(LocalSpillStore::new(Some(&root)));
        let registry = registry(work.path(), Some(store)).await;
        for (tool, args) in [
            ("glob", json!({"pattern": "*.txt"})),
            ("grep", json!({"pattern": "alpha"})),
        ] {
            let result = registry.call(tool, &args, &with_owner()).await;
            assert!(!result.is_error, "{result:?}");
            assert!(result.text == GLOB_NOT_SAVED || result.text == GREP_NOT_SAVED);
            let [warning] = result.warnings.as_slice() else {
                panic!("one warning: {:?}", result.warnings);
            };
            let prefix = format!("tool-fs-search: saveText failed for {tool}: Error: ");
            assert!(warning.starts_with(&prefix), "{warning}");
            assert!(
                warning.ends_with("; complete result not saved"),
                "{warning}"
            );
            if let Some(detail) = detail {
                assert_eq!(*warning, save_failed(detail)(tool));
            }
        }
        assert!(!root.exists() || root == read_only);
    }
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A store on a full disk: every write fails with ENOSPC (injected).
struct FullDiskStore;

#[async_trait]
impl SpillStore for FullDiskStore {
    async fn save_text(&self, _input: SaveTextSpill) -> Result<SpillRef, SpillError> {
        Err(SpillError::Io(std::io::Error::from_raw_os_error(28)))
    }
}

#[tokio::test]
async fn a_store_failing_on_write_with_a_full_disk_injected_degrades_to_could_not_save() {
    let work = work_tree();
    let registry = registry(work.path(), Some(Arc::new(FullDiskStore))).await;
    assert_degrades(
        &registry,
        &with_owner(),
        save_failed("No space left on device (os error 28)"),
    )
    .await;
}

#[tokio::test]
async fn a_missing_session_owner_degrades_to_could_not_save() {
    let work = work_tree();
    let root = tempfile::tempdir().unwrap();
    let store = Arc::new(LocalSpillStore::new(Some(root.path())));
    let registry = registry(work.path(), Some(store)).await;
    let warning = |tool: &str| {
        format!("tool-fs-search: no session owner for {tool} result; complete result not saved")
    };
    // A call without agent, and a session header without an id.
    assert_degrades(&registry, &ExecContext::new("c"), warning).await;
    let exec = ExecContext::new("c").with_session(None, None);
    assert_degrades(&registry, &exec, warning).await;
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn no_spill_store_degrades_to_could_not_save() {
    let work = work_tree();
    let registry = registry(work.path(), None).await;
    assert_degrades(&registry, &with_owner(), |tool| {
        format!(
            "tool-fs-search: no ctx.spillStore backend loaded; complete {tool} result not saved"
        )
    })
    .await;
}

/// The session directory name the store uses for `with_owner()`.
async fn session_dir_name(work: &Path) -> std::ffi::OsString {
    let root = tempfile::tempdir().unwrap();
    let store = Arc::new(LocalSpillStore::new(Some(root.path())));
    let registry = registry(work, Some(store)).await;
    let result = registry
        .call("glob", &json!({"pattern": "*.txt"}), &with_owner())
        .await;
    let locator = PathBuf::from(&result.spill.as_ref().unwrap().locator);
    locator.parent().unwrap().file_name().unwrap().to_owned()
}

#[tokio::test]
async fn a_planted_session_symlink_or_a_foreign_session_dir_in_a_shared_root_degrades_to_could_not_save()
 {
    let work = work_tree();
    let name = session_dir_name(work.path()).await;
    // A symbolic link planted where the session directory goes.
    let shared = tempfile::tempdir().unwrap();
    let victim = tempfile::tempdir().unwrap();
    let planted = shared.path().join(&name);
    std::os::unix::fs::symlink(victim.path(), &planted).unwrap();
    let store = Arc::new(LocalSpillStore::new(Some(shared.path())));
    let reg = registry(work.path(), Some(store)).await;
    let detail = format!(
        "refusing the spill directory {}: it is a symbolic link",
        planted.display()
    );
    assert_degrades(&reg, &with_owner(), save_failed(&detail)).await;
    assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0);
    // A directory of another user (chown needs root; else skipped).
    let shared = tempfile::tempdir().unwrap();
    let foreign = shared.path().join(&name);
    std::fs::create_dir(&foreign).unwrap();
    if std::os::unix::fs::chown(&foreign, Some(54_321), None).is_ok() {
        let store = Arc::new(LocalSpillStore::new(Some(shared.path())));
        let reg = registry(work.path(), Some(store)).await;
        let detail = format!(
            "refusing the spill directory {}: it is owned by another user",
            foreign.display()
        );
        assert_degrades(&reg, &with_owner(), save_failed(&detail)).await;
        assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 0);
    }
    // A regular file there.
    let shared = tempfile::tempdir().unwrap();
    std::fs::write(shared.path().join(&name), "").unwrap();
    let store = Arc::new(LocalSpillStore::new(Some(shared.path())));
    let reg = registry(work.path(), Some(store)).await;
    let detail = format!(
        "refusing the spill directory {}: it is not a directory",
        shared.path().join(&name).display()
    );
    assert_degrades(&reg, &with_owner(), save_failed(&detail)).await;
}
