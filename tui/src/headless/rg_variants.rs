//! One fixture for every rg, in the headless commands: `workbench freeze
//! --also-rg DIR` (each named rg run on the frozen fixture, its variant
//! written wherever its page differs, and the fixture replayed under it
//! as proof) and `workbench replay --add-variant` (the running rg's
//! variant added to an existing fixture). The transcript side is
//! [`fs_search_transcript::with_variant_added`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fs_search_tokens::Tokenizer;
use fs_search_transcript::TranscriptError;
use fs_search_transcript::record_lines;

use fs_search_transcript::OtherRg;
use fs_search_transcript::save_transcript;
use fs_search_transcript::{Replay, read_transcript, replay_transcript_with_rg};
use fs_search_transcript::{VariantAdded, with_variant_added};

/// The rgs `--also-rg` names, each checked (an executable rg whose
/// version reads) before anything is frozen; two of one major version
/// are refused, since a fixture holds one variant per major.
pub(crate) fn resolve_also_rg(
    named: &[PathBuf],
    temp: &Path,
) -> Result<Vec<OtherRg>, TranscriptError> {
    let mut by_major: BTreeMap<u32, PathBuf> = BTreeMap::new();
    let mut out = Vec::with_capacity(named.len());
    for name in named {
        let rg = OtherRg::new(name, temp)
            .map_err(|e| TranscriptError::Other(format!("--also-rg {}: {e}", name.display())))?;
        let major = rg.major().unwrap_or_default();
        if let Some(earlier) = by_major.insert(major, name.clone()) {
            return Err(TranscriptError::Other(format!(
                "--also-rg {} and --also-rg {} are both rg {major}: a fixture holds one variant per major version",
                earlier.display(),
                name.display()
            )));
        }
        out.push(rg);
    }
    Ok(out)
}

/// What `--also-rg` did with one rg.
pub(crate) enum AlsoRgOutcome {
    /// The rg on `PATH`, which froze the fixture, is of its major version.
    SameAsFrozen { version: String, frozen: String },
    /// Its variant was added to these records (none: every page the same).
    Added {
        version: String,
        major: u32,
        records: Vec<String>,
        total: usize,
    },
}

impl AlsoRgOutcome {
    /// The note `freeze` prints on stderr.
    pub(crate) fn note(&self, out_file: &Path) -> String {
        match self {
            Self::SameAsFrozen { version, frozen } => format!(
                "--also-rg {version}: skipped, the fixture was frozen with {frozen}, of the same major version"
            ),
            Self::Added {
                version,
                records,
                total,
                ..
            } if records.is_empty() => {
                format!("{version} gives the same page for all {total} records: no variant needed")
            }
            Self::Added {
                version,
                major,
                records,
                total,
            } => format!(
                "{version} gives another page for {} of {total} records: their rg {major} variants are in {} ({})",
                records.len(),
                out_file.display(),
                quoted(records)
            ),
        }
    }

    /// Whether a proof replay under this rg is due.
    pub(crate) fn replays(&self) -> bool {
        matches!(self, Self::Added { .. })
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs every record of the written fixture `out_file` under each of
/// `also` and writes its variant wherever its page differs (token counts
/// with `tokenizer` when the fixture carries them). Returns what each rg
/// did, in order, and the fixture's call lines as they end up.
pub(crate) async fn add_also_rg_variants(
    out_file: &Path,
    temp: &Path,
    also: &[OtherRg],
    tokenizer: Option<&Tokenizer>,
) -> Result<(Vec<AlsoRgOutcome>, Vec<usize>), TranscriptError> {
    let mut outcomes = Vec::with_capacity(also.len());
    let mut transcript = read_transcript(out_file)?;
    for rg in also {
        let frozen = transcript.header.env.rg.clone();
        if rg.major() == fs_search_process::major_of_line(&frozen) {
            outcomes.push(AlsoRgOutcome::SameAsFrozen {
                version: rg.version_line().to_owned(),
                frozen,
            });
            continue;
        }
        let mut replay = replay_transcript_with_rg(out_file, transcript.clone(), temp, rg).await?;
        if let Some(tokenizer) = tokenizer {
            replay.count_tokens(tokenizer);
        }
        let VariantAdded {
            transcript: with_variant,
            major,
            records,
            ..
        } = with_variant_added(&replay)?;
        if !records.is_empty() {
            save_transcript(out_file, &with_variant)?;
            transcript = with_variant;
        }
        outcomes.push(AlsoRgOutcome::Added {
            version: rg.version_line().to_owned(),
            major,
            records,
            total: transcript.records.len(),
        });
    }
    Ok((outcomes, record_lines(&transcript)))
}

/// Replays the fixture under each rg of `also` that added (or needed no)
/// variant: the proof that it replays clean there too.
pub(crate) async fn proof_replays(
    out_file: &Path,
    temp: &Path,
    also: &[OtherRg],
    outcomes: &[AlsoRgOutcome],
) -> Result<Vec<Replay>, TranscriptError> {
    let mut replays = Vec::new();
    for (rg, outcome) in also.iter().zip(outcomes) {
        if outcome.replays() {
            let transcript = read_transcript(out_file)?;
            replays.push(replay_transcript_with_rg(out_file, transcript, temp, rg).await?);
        }
    }
    Ok(replays)
}

/// `replay --add-variant` for one replayed file: writes the running rg's
/// variant into `file` for each record that differs and returns the line
/// to print.
pub(crate) fn add_variant(file: &Path, replay: &Replay) -> Result<String, TranscriptError> {
    let added = with_variant_added(replay)?;
    save_transcript(file, &added.transcript)?;
    if let Some(release) = added.release {
        return Ok(format!(
            "added the variant for {release} (under {}) to {} of {} records of {}: {} (the other records and variants are as they were)\n",
            replay.rg_now,
            added.records.len(),
            replay.checks.len(),
            replay.file,
            quoted(&added.records)
        ));
    }
    Ok(format!(
        "added the variant for rg {} ({}) to {} of {} records of {}: {} (the other records and variants are as they were)\n",
        added.major,
        replay.rg_now,
        added.records.len(),
        replay.checks.len(),
        replay.file,
        quoted(&added.records)
    ))
}
