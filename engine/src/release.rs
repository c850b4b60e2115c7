//! Which release of the package the engine is exact to: the seed's 0.0.1
//! (rg through the bash seam) or 0.1.0-rc.8 (rg spawned with an argv, no
//! shell, no load probe; docs/contract.md, "0.1.0-rc.8"). Everything a
//! model sees is the same in both except what that section lists.

use thiserror::Error;

/// A release of `@deepseek-ai/dsh-tool-fs-search`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Release {
    /// 0.0.1, the seed's: `bash -c` with the fixed command string, a
    /// `command -v rg` probe at load.
    #[default]
    Seed,
    /// 0.1.0-rc.8: rg spawned directly with `--no-config` first; the tools
    /// always register; `graceMs` and `stderrMaxBytes` configurable.
    Rc8,
}

/// A release name that is not one of [`Release::NAMES`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown contract release `{0}` (expected 0.0.1 or 0.1.0-rc.8)")]
pub struct UnknownRelease(pub String);

impl Release {
    /// Every release, oldest first.
    pub const ALL: [Release; 2] = [Release::Seed, Release::Rc8];
    /// Their names, as `--contract` and a transcript header spell them.
    pub const NAMES: [&'static str; 2] = ["0.0.1", "0.1.0-rc.8"];

    /// The release's version, e.g. `0.1.0-rc.8`.
    pub fn name(self) -> &'static str {
        match self {
            Release::Seed => Self::NAMES[0],
            Release::Rc8 => Self::NAMES[1],
        }
    }

    /// Whether the release probes for rg at load (only the seed does).
    pub fn probes_at_load(self) -> bool {
        self == Release::Seed
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Release {
    type Err = UnknownRelease;

    fn from_str(name: &str) -> Result<Self, UnknownRelease> {
        Release::ALL
            .into_iter()
            .find(|release| release.name() == name)
            .ok_or_else(|| UnknownRelease(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_anything_else_is_refused() {
        for release in Release::ALL {
            assert_eq!(release.name().parse::<Release>(), Ok(release));
        }
        assert_eq!(Release::default(), Release::Seed);
        assert_eq!(
            "0.1.0".parse::<Release>().unwrap_err().to_string(),
            "unknown contract release `0.1.0` (expected 0.0.1 or 0.1.0-rc.8)"
        );
    }
}
