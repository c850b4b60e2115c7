//! Normalisation: what differs between two runs of the same call on two
//! machines is replaced by placeholders before results are recorded or
//! compared — the materialised tree's temp root (`<TREE>`), the spill
//! store's root (`<SPILL>`), other private temp roots, and the random
//! 12-hex prefix of a local spill locator (`<RAND>`). The session
//! directory's hash is kept: it is SHA-256 of the recorded session id, so
//! it is the same on every machine.

use std::path::Path;

/// Placeholder of the spill store root.
pub const SPILL: &str = "<SPILL>";
/// Placeholder of the materialised tree root.
pub const TREE: &str = "<TREE>";
/// Placeholder of a random locator prefix.
pub(crate) const RAND: &str = "<RAND>";

/// Replaces known roots, longest first, then random locator prefixes.
#[derive(Debug, Clone, Default)]
pub struct Normaliser {
    roots: Vec<(String, String)>,
}

impl Normaliser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces `root` (and its canonical form, if different) by `placeholder`.
    pub fn with_root(mut self, root: &Path, placeholder: &str) -> Self {
        self.add_root(root, placeholder);
        self
    }

    pub fn add_root(&mut self, root: &Path, placeholder: &str) {
        let mut forms = vec![root.to_string_lossy().into_owned()];
        if let Ok(canonical) = root.canonicalize() {
            forms.push(canonical.to_string_lossy().into_owned());
        }
        for form in forms {
            let form = form.trim_end_matches('/').to_owned();
            if !form.is_empty() && !self.roots.iter().any(|(r, _)| *r == form) {
                self.roots.push((form, placeholder.to_owned()));
            }
        }
        self.roots.sort_by_key(|r| std::cmp::Reverse(r.0.len()));
    }

    /// Adds the root of a local spill `locator`
    /// (`{root}/session-{12 hex}/{12 hex}-{name}`), whatever it is.
    pub fn add_spill_locator(&mut self, locator: &str) {
        let path = Path::new(locator);
        let session_dir = path.parent();
        let is_session = session_dir
            .and_then(Path::file_name)
            .is_some_and(|n| n.to_string_lossy().starts_with("session-"));
        if let (true, Some(root)) = (is_session, session_dir.and_then(Path::parent)) {
            self.add_root(root, SPILL);
        }
    }

    /// The normalised form of `text`.
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (root, placeholder) in &self.roots {
            if out.contains(root.as_str()) {
                out = out.replace(root.as_str(), placeholder);
            }
        }
        mask_random_prefixes(&out)
    }
}

fn is_hex12(s: &str) -> bool {
    s.len() == 12
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `<SPILL>/session-{12 hex}/{12 hex}-` → `<SPILL>/session-{12 hex}/<RAND>-`.
fn mask_random_prefixes(text: &str) -> String {
    let marker = format!("{SPILL}/session-");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&marker) {
        let after = at + marker.len();
        out.push_str(&rest[..after]);
        rest = &rest[after..];
        // {12 hex}/{12 hex}-
        let session = rest.get(..12);
        let slash = rest.get(12..13);
        let random = rest.get(13..25);
        let dash = rest.get(25..26);
        match (session, slash, random, dash) {
            (Some(s), Some("/"), Some(r), Some("-")) if is_hex12(s) && is_hex12(r) => {
                out.push_str(s);
                out.push('/');
                out.push_str(RAND);
                rest = &rest[25..];
            }
            _ => {}
        }
    }
    out.push_str(rest);
    out
}

/// The call argument that names a place in the tree.
const PATH_ARG: &str = "path";

/// `path` under one of `roots` (on a `/` boundary), as `<TREE>` and the
/// rest.
fn under_root(path: &str, roots: &[String]) -> Option<String> {
    roots.iter().find_map(|root| {
        let rest = path.strip_prefix(root.trim_end_matches('/'))?;
        (rest.is_empty() || rest.starts_with('/')).then(|| format!("{TREE}{rest}"))
    })
}

/// A call's arguments with an absolute `path` inside the tree `root` (as
/// given or canonical) written `<TREE>/…`, as `workbench freeze` keeps a
/// live session's absolute paths so they follow the fixture tree; `None`
/// when nothing changes.
pub(crate) fn path_arg_to_placeholder(
    args: &serde_json::Value,
    root: &Path,
) -> Option<serde_json::Value> {
    let path = args.get(PATH_ARG)?.as_str()?;
    let mut roots = vec![root.to_string_lossy().into_owned()];
    if let Ok(canonical) = root.canonicalize() {
        roots.push(canonical.to_string_lossy().into_owned());
    }
    let placed = under_root(path, &roots)?;
    let mut args = args.clone();
    args[PATH_ARG] = serde_json::Value::String(placed);
    Some(args)
}

/// A call's arguments with a `path` that starts with `<TREE>` rooted at
/// `root` (the materialised tree); `None` when there is none.
pub(crate) fn path_arg_on_root(args: &serde_json::Value, root: &Path) -> Option<serde_json::Value> {
    let path = args.get(PATH_ARG)?.as_str()?;
    let rest = path.strip_prefix(TREE)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let mut args = args.clone();
    args[PATH_ARG] = serde_json::Value::String(format!("{}{rest}", root.to_string_lossy()));
    Some(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_path_into_the_tree_round_trips_through_the_placeholder() {
        let args = serde_json::json!({"pattern": "x", "path": "/work/repo/src"});
        let placed = path_arg_to_placeholder(&args, Path::new("/work/repo")).unwrap();
        assert_eq!(placed["path"], "<TREE>/src");
        let root = path_arg_on_root(&placed, Path::new("/tmp/tree-1")).unwrap();
        assert_eq!(root["path"], "/tmp/tree-1/src");
        let whole = serde_json::json!({"path": "/work/repo"});
        assert_eq!(
            path_arg_to_placeholder(&whole, Path::new("/work/repo/")).unwrap()["path"],
            "<TREE>"
        );
        for outside in ["/work/repository", "src", "/etc"] {
            let args = serde_json::json!({ "path": outside });
            assert_eq!(
                path_arg_to_placeholder(&args, Path::new("/work/repo")),
                None
            );
        }
        assert_eq!(
            path_arg_on_root(&serde_json::json!({"path": "<TREE>x"}), Path::new("/t")),
            None
        );
    }

    #[test]
    fn replaces_roots_longest_first_and_masks_random_prefixes() {
        let mut n = Normaliser::new()
            .with_root(Path::new("/tmp/t"), TREE)
            .with_root(Path::new("/tmp/t/spill/"), SPILL);
        n.add_spill_locator("/var/x/session-0123456789ab/aaaaaaaaaaaa-glob-results.txt");
        let text = "at /tmp/t/spill/session-0123456789ab/deadbeef0123-grep-results.txt. \
                    /tmp/t/a and /var/x/session-0123456789ab/ffffffffffff-x and \
                    <SPILL>/session-short/0123-x";
        assert_eq!(
            n.apply(text),
            "at <SPILL>/session-0123456789ab/<RAND>-grep-results.txt. \
             <TREE>/a and <SPILL>/session-0123456789ab/<RAND>-x and \
             <SPILL>/session-short/0123-x"
        );
    }

    #[test]
    fn leaves_upper_case_and_short_hex_alone() {
        let n = Normaliser::new();
        let text =
            "<SPILL>/session-0123456789AB/0123456789ab-x <SPILL>/session-0123456789ab/0123-x";
        assert_eq!(n.apply(text), text);
    }
}
