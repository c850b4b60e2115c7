//! Display-path mapping (`toWorkdirRelative`): POSIX lexical path
//! normalisation and relativisation, with Node `path.relative` semantics
//! (no symlink resolution).

use std::borrow::Cow;

/// Lexically resolves `path` to an absolute, normalised POSIX path (Node's
/// `path.resolve` with one argument): a relative path is resolved against
/// the process working directory; `.`/`..` segments, duplicate and trailing
/// separators are removed.
pub fn resolve_lexically(path: &str) -> String {
    let joined: Cow<'_, str> = if path.starts_with('/') {
        Cow::Borrowed(path)
    } else {
        let cwd = std::env::current_dir()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "/".to_owned());
        Cow::Owned(format!("{cwd}/{path}"))
    };
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    let mut out = String::with_capacity(joined.len());
    for segment in &segments {
        out.push('/');
        out.push_str(segment);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Node's `path.relative(from, to)` for two already-resolved absolute paths.
fn relative(from: &str, to: &str) -> String {
    let from_segments: Vec<&str> = from.split('/').filter(|s| !s.is_empty()).collect();
    let to_segments: Vec<&str> = to.split('/').filter(|s| !s.is_empty()).collect();
    let common = from_segments
        .iter()
        .zip(&to_segments)
        .take_while(|(a, b)| a == b)
        .count();
    let ups = from_segments.len() - common;
    let mut parts: Vec<&str> = std::iter::repeat_n("..", ups).collect();
    parts.extend_from_slice(&to_segments[common..]);
    parts.join("/")
}

/// Maps paths printed by ripgrep to their display form relative to one
/// workdir, resolving the workdir once.
pub(crate) struct DisplayMapper {
    workdir: String,
}

impl DisplayMapper {
    pub(crate) fn new(workdir: &str) -> Self {
        Self {
            workdir: resolve_lexically(workdir),
        }
    }

    /// A relative path is returned unchanged; an absolute path inside the
    /// workdir becomes workdir-relative (`.` for the workdir itself); an
    /// absolute path outside it is returned unchanged (not normalised).
    pub(crate) fn map<'a>(&self, path: &'a str) -> Cow<'a, str> {
        if !path.starts_with('/') {
            return Cow::Borrowed(path);
        }
        let rel = relative(&self.workdir, &resolve_lexically(path));
        if rel.is_empty() {
            return Cow::Borrowed(".");
        }
        if rel == ".." || rel.starts_with("../") {
            return Cow::Borrowed(path);
        }
        Cow::Owned(rel)
    }
}

/// `toWorkdirRelative(path, workdir)`: the display mapping of a path under `workdir`.
pub fn to_workdir_relative<'a>(path: &'a str, workdir: &str) -> Cow<'a, str> {
    DisplayMapper::new(workdir).map(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CONTRACT §10.13 #102
    #[test]
    fn maps_inside_workdir_absolutes_and_passes_everything_else_through() {
        assert_eq!(to_workdir_relative("/w/a/b.ts", "/w"), "a/b.ts");
        assert_eq!(to_workdir_relative("/w", "/w"), ".");
        assert_eq!(to_workdir_relative("/other/b.ts", "/w"), "/other/b.ts");
        assert_eq!(
            to_workdir_relative("/w-sibling/b.ts", "/w"),
            "/w-sibling/b.ts"
        );
        assert_eq!(to_workdir_relative("rel/b.ts", "/w"), "rel/b.ts");
        assert_eq!(to_workdir_relative("/w/../up.ts", "/w"), "/w/../up.ts");
    }

    #[test]
    fn normalises_dot_segments_and_trailing_separators() {
        assert_eq!(to_workdir_relative("/w/a/./b.ts", "/w"), "a/b.ts");
        assert_eq!(to_workdir_relative("/w/a//b.ts", "/w/"), "a/b.ts");
        assert_eq!(to_workdir_relative("/a/b", "/"), "a/b");
        assert_eq!(to_workdir_relative("/", "/"), ".");
        assert_eq!(to_workdir_relative("./x", "/w"), "./x");
    }

    #[test]
    fn resolves_a_relative_workdir_against_the_process_cwd() {
        let cwd = std::env::current_dir().unwrap();
        let inside = format!("{}/sub/file.txt", cwd.display());
        assert_eq!(to_workdir_relative(&inside, "."), "sub/file.txt");
    }
}
