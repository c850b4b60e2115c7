//! Paths in one call's terms: every path the explanation compares is made
//! absolute and lexically normal against the workdir (as rg, started in
//! the workdir, resolves them), and shown as the page writes it.

use fs_search_engine::helpers::to_workdir_relative;

/// Resolves and displays paths for one call.
#[derive(Debug, Clone)]
pub(super) struct CallPaths {
    /// The workdir, absolute and lexically normal.
    pub workdir: String,
    /// The call's `path` argument as given.
    pub root_arg: Option<String>,
    /// The search root, absolute (the workdir without `path`).
    pub root: String,
}

impl CallPaths {
    /// The paths of a call in `workdir` with `path` argument `root_arg`.
    pub(super) fn new(workdir: &str, root_arg: Option<&str>) -> Self {
        let workdir = resolve_lexically(workdir);
        let root = match root_arg {
            Some(arg) => absolute_in(&workdir, arg),
            None => workdir.clone(),
        };
        Self {
            workdir,
            root_arg: root_arg.map(str::to_owned),
            root,
        }
    }

    /// `path` (absolute, or relative to the workdir) made absolute.
    pub(super) fn absolute(&self, path: &str) -> String {
        absolute_in(&self.workdir, path)
    }

    /// Whether the absolute `path` is the search root or under it.
    pub(super) fn is_under_root(&self, path: &str) -> bool {
        is_under(path, &self.root)
    }

    /// `path` relative to the workdir (`.` for it), or absolute outside it.
    pub(super) fn relative(&self, path: &str) -> String {
        to_workdir_relative(path, &self.workdir).into_owned()
    }

    /// How the page writes the absolute `path` of a file under the root:
    /// rg prints it under the root as given, then the workdir-relative
    /// mapping applies (CONTRACT §5.4).
    pub(super) fn display(&self, path: &str) -> String {
        let Some(arg) = &self.root_arg else {
            return self.relative(path);
        };
        if path == self.root || !self.is_under_root(path) {
            return to_workdir_relative(arg, &self.workdir).into_owned();
        }
        let tail = path[self.root.len()..].trim_start_matches('/');
        let printed = if arg.ends_with('/') {
            format!("{arg}{tail}")
        } else {
            format!("{arg}/{tail}")
        };
        to_workdir_relative(&printed, &self.workdir).into_owned()
    }
}

/// `path` made absolute against the process's working directory and
/// lexically normal (`.`, `..`, repeated and trailing `/` resolved; no
/// symlink is followed), as Node's `path.resolve` and the engine do.
pub(super) fn resolve_lexically(path: &str) -> String {
    if path.starts_with('/') {
        return normalise(path);
    }
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".to_owned());
    normalise(&format!("{cwd}/{path}"))
}

/// An absolute path without `.`/`..` segments or repeated separators.
fn normalise(absolute: &str) -> String {
    let already = !absolute.ends_with('/')
        && !absolute.contains("//")
        && !absolute
            .split('/')
            .any(|segment| segment == "." || segment == "..");
    if already && !absolute.is_empty() {
        return absolute.to_owned();
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in absolute.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    if segments.is_empty() {
        return "/".to_owned();
    }
    let mut out = String::with_capacity(absolute.len());
    for segment in segments {
        out.push('/');
        out.push_str(segment);
    }
    out
}

/// `path` resolved against the absolute `base`.
pub(super) fn absolute_in(base: &str, path: &str) -> String {
    if path.starts_with('/') {
        resolve_lexically(path)
    } else {
        resolve_lexically(&format!("{base}/{path}"))
    }
}

/// Whether `path` is `dir` or under it (both absolute and normal).
pub(super) fn is_under(path: &str, dir: &str) -> bool {
    dir == "/"
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The ancestors of `path` from `dir` (exclusive) down to `path` itself
/// (inclusive), outermost first; empty when `path` is not under `dir`.
pub(super) fn steps_below(path: &str, dir: &str) -> Vec<String> {
    step_prefixes(path, dir).map(str::to_owned).collect()
}

/// [`steps_below`] as slices of `path`, without allocating.
pub(super) fn step_prefixes<'a>(path: &'a str, dir: &str) -> impl Iterator<Item = &'a str> {
    let under = is_under(path, dir) && path != dir;
    let start = if under {
        dir.trim_end_matches('/').len() + 1
    } else {
        path.len()
    };
    let ends = path
        .get(start..)
        .unwrap_or_default()
        .match_indices('/')
        .map(move |(at, _)| start + at)
        .chain(under.then_some(path.len()));
    ends.map(move |end| &path[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_follows_how_rg_prints_under_the_root_as_given() {
        let none = CallPaths::new("/w", None);
        assert_eq!(none.display("/w/a/b.rs"), "a/b.rs");
        let dot = CallPaths::new("/w", Some("."));
        assert_eq!(dot.display("/w/a/b.rs"), "./a/b.rs");
        let sub = CallPaths::new("/w", Some("src/"));
        assert_eq!(sub.display("/w/src/b.rs"), "src/b.rs");
        let abs = CallPaths::new("/w", Some("/w/src"));
        assert_eq!(abs.display("/w/src/b.rs"), "src/b.rs");
        let out = CallPaths::new("/w", Some("/o"));
        assert_eq!(out.display("/o/b.rs"), "/o/b.rs");
    }

    #[test]
    fn paths_already_normal_come_back_as_they_are_and_others_are_normalised() {
        assert_eq!(normalise("/w/a.b/c"), "/w/a.b/c");
        assert_eq!(normalise("/w/./a//b/../c/"), "/w/a/c");
        assert_eq!(normalise("/.."), "/");
        assert_eq!(normalise("/w/.hidden/..x"), "/w/.hidden/..x");
    }

    #[test]
    fn steps_below_lists_each_level_under_the_root() {
        assert_eq!(
            steps_below("/w/a/b/c", "/w"),
            vec!["/w/a", "/w/a/b", "/w/a/b/c"]
        );
        assert_eq!(steps_below("/x/a", "/w"), Vec::<String>::new());
        assert_eq!(steps_below("/a", "/"), vec!["/a"]);
        assert!(!is_under("/w-sibling/a", "/w"));
    }
}
