//! What a sandbox holds besides the workspace: the files bash and rg need
//! to start and run as they do outside it, found once per environment.
//!
//! - the programs the child's `PATH` finds: `bash`, `rg`, and the two the
//!   agent's script calls, `sleep` (its wait for a command's group to be
//!   gone) and `env` (a variable name bash cannot export), each file alone;
//! - the shared libraries each of them loads and the loader, as `ldd`
//!   (glibc's, which asks the loader itself) lists them: one `ldd` run per
//!   program when the executor is built, none per command;
//! - the ripgrep config file `RIPGREP_CONFIG_PATH` names;
//! - the locale data of the locale the child's `LANG`/`LC_*` name
//!   (`/usr/lib/locale/NAME` and `locale-archive`), so that bash and rg
//!   treat bytes as they do outside (no secret lives there).
//!
//! Each path is kept as the chain the kernel walks to reach the file: the
//! symbolic links on the way (a merged-`/usr` `/lib64 -> usr/lib64`, the
//! loader's own link) and the file at its real path, so a sandbox can
//! recreate the links and bind the file, and every path keeps its name.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use super::super::shell::{SHELL, find_program_on_path};

/// The programs found on the child's `PATH` and bound with their
/// libraries: the shell, rg, and what the agent's script runs.
pub(crate) const PROGRAMS: [&str; 4] = [SHELL, "rg", "sleep", "env"];

/// Where glibc keeps compiled locales.
const LOCALE_DIR: &str = "/usr/lib/locale";

/// The most symbolic links followed on one path (as the kernel's 40).
const MAX_LINKS: usize = 40;

/// One step of a path's chain.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Entry {
    /// A symbolic link at `at`, whose content is `target`.
    Link { at: PathBuf, target: PathBuf },
    /// A file or directory at its real path.
    Real(PathBuf),
}

/// The chains of everything a sandbox for one environment shows besides
/// the workspace and the operator's extras, links first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Exposed {
    pub(crate) links: BTreeSet<(PathBuf, PathBuf)>,
    pub(crate) real: BTreeSet<PathBuf>,
}

/// The variables that decide what [`exposed`] finds: a run whose values
/// of these equal the executor's needs no new search.
pub(crate) fn key(env: &BTreeMap<OsString, OsString>) -> Vec<(OsString, OsString)> {
    env.iter()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            name == "PATH" || name == "RIPGREP_CONFIG_PATH" || is_locale_name(&name)
        })
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// `LANG`, `LANGUAGE` and `LC_*`.
pub(crate) fn is_locale_name(name: &str) -> bool {
    name == "LANG" || name == "LANGUAGE" || name.starts_with("LC_")
}

/// What a child with environment `env` needs (module doc).
pub(crate) fn exposed(env: &BTreeMap<OsString, OsString>) -> Exposed {
    let path = env.get(OsStr::new("PATH")).map(OsString::as_os_str);
    let mut files: Vec<PathBuf> = Vec::new();
    for name in PROGRAMS {
        if let Some(program) = find_program_on_path(name, path) {
            files.extend(libraries(&program));
            files.push(program);
        }
    }
    if let Some(config) = env
        .get(OsStr::new("RIPGREP_CONFIG_PATH"))
        .map(PathBuf::from)
        .filter(|file| file.is_absolute() && file.is_file())
    {
        files.push(config);
    }
    files.extend(locale_data(env));
    let mut out = Exposed::default();
    for file in files {
        for entry in chain(&file) {
            match entry {
                Entry::Link { at, target } => {
                    out.links.insert((at, target));
                }
                Entry::Real(real) => {
                    out.real.insert(real);
                }
            }
        }
    }
    out
}

/// The shared libraries and loader `program` loads, by `ldd`'s list
/// (`NAME => /PATH (ADDR)` and `/LOADER (ADDR)` lines; the vDSO has no
/// file). None for a static program or when `ldd` is missing.
fn libraries(program: &Path) -> Vec<PathBuf> {
    let Ok(output) = std::process::Command::new("ldd")
        .arg(program)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    parse_ldd(&String::from_utf8_lossy(&output.stdout))
}

/// The absolute paths in `ldd`'s output.
pub(crate) fn parse_ldd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let path = match line.split_once("=>") {
                Some((_, after)) => after.trim(),
                None => line,
            };
            let path = path.split(" (").next().unwrap_or_default().trim();
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// The compiled locales the child's locale variables name, and the
/// archive glibc reads first.
fn locale_data(env: &BTreeMap<OsString, OsString>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let archive = Path::new(LOCALE_DIR).join("locale-archive");
    if archive.is_file() {
        out.push(archive);
    }
    for (name, value) in env {
        let (name, value) = (name.to_string_lossy(), value.to_string_lossy());
        if !is_locale_name(&name) || value.is_empty() || value.contains('/') {
            continue;
        }
        for locale in [value.to_string(), normalised_codeset(&value)] {
            let dir = Path::new(LOCALE_DIR).join(&locale);
            if dir.is_dir() && !out.contains(&dir) {
                out.push(dir);
            }
        }
    }
    out
}

/// `lang_TERRITORY.CODESET@mod` with the codeset as glibc names its
/// directory (`UTF-8` -> `utf8`).
fn normalised_codeset(locale: &str) -> String {
    let Some((lang, rest)) = locale.split_once('.') else {
        return locale.to_owned();
    };
    let (codeset, modifier) = match rest.split_once('@') {
        Some((codeset, modifier)) => (codeset, format!("@{modifier}")),
        None => (rest, String::new()),
    };
    let codeset: String = codeset
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    format!("{lang}.{codeset}{modifier}")
}

/// The links on the way to `path` (absolute) and the real file it names.
pub(crate) fn chain(path: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut pending = path.to_path_buf();
    'walk: for _ in 0..MAX_LINKS {
        let mut at = PathBuf::from("/");
        let components: Vec<Component> = pending.components().collect();
        for (index, component) in components.iter().enumerate() {
            match component {
                Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
                Component::ParentDir => {
                    at.pop();
                    continue;
                }
                Component::Normal(name) => at.push(name),
            }
            if let Ok(target) = std::fs::read_link(&at) {
                out.push(Entry::Link {
                    at: at.clone(),
                    target: target.clone(),
                });
                let mut next = match target.is_absolute() {
                    true => target,
                    false => at.parent().unwrap_or(Path::new("/")).join(target),
                };
                for rest in &components[index + 1..] {
                    next.push(rest);
                }
                pending = super::normalised(&next);
                continue 'walk;
            }
        }
        if at.exists() {
            out.push(Entry::Real(at));
        }
        break;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_lines_give_the_libraries_and_the_loader_not_the_vdso() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
        assert_eq!(
            parse_ldd(text),
            [
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2"
            ]
            .map(PathBuf::from)
        );
        assert!(parse_ldd("\tstatically linked\n").is_empty());
    }

    #[test]
    fn a_path_through_links_keeps_each_link_and_ends_at_the_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("usr/lib");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("libx.so.1.2"), "").unwrap();
        std::os::unix::fs::symlink("libx.so.1.2", real.join("libx.so.1")).unwrap();
        std::os::unix::fs::symlink("usr/lib", dir.path().join("lib")).unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let found = chain(&root.join("lib/libx.so.1"));
        assert_eq!(
            found,
            [
                Entry::Link {
                    at: root.join("lib"),
                    target: PathBuf::from("usr/lib")
                },
                Entry::Link {
                    at: root.join("usr/lib/libx.so.1"),
                    target: PathBuf::from("libx.so.1.2")
                },
                Entry::Real(root.join("usr/lib/libx.so.1.2")),
            ]
        );
    }

    #[test]
    fn a_locale_name_finds_glibc_s_directory_spelling() {
        assert_eq!(normalised_codeset("C.UTF-8"), "C.utf8");
        assert_eq!(
            normalised_codeset("de_DE.ISO-8859-1@euro"),
            "de_DE.iso88591@euro"
        );
        assert_eq!(normalised_codeset("POSIX"), "POSIX");
    }
}
