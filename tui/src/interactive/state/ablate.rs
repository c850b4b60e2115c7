//! The Transcript tab's ablate mode: the `--set` values typed
//! for the chosen transcript, the run's progress while it replays off the
//! UI, and its result: the variants, the selected variant, its changed
//! calls and the one opened side by side against the baseline (cut and
//! scrolled sideways, or wrapped, as the replay view's rows). The run
//! itself is `Effect::Ablate`; keys become changes in `App`; drawing is
//! in `views::ablate`.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::{Map, Value};
use tui_input::Input;

use fs_search_transcript::AblateProgress;
use fs_search_transcript::Outcome;
use fs_search_transcript::VariantStats;
use fs_search_transcript::{CompareRow, side_by_side};

use super::transcript::{RowView, TranscriptAction};

/// What the ablate prompt suggests: shown dimmed in the empty input and
/// run by Enter while nothing is typed (typing replaces it, never adds to
/// it).
pub(crate) const SUGGESTED_SET: &str = "grepMaxMatches=50,100,250";

/// The most buckets of the page-tokens histogram.
pub(crate) const HISTOGRAM_BUCKETS: usize = 8;

/// One changed page, kept to diff it against the baseline's.
#[derive(Debug, Clone)]
pub struct ChangedPage {
    /// The record's index in the transcript and its name.
    pub record: usize,
    pub name: String,
    pub baseline: Outcome,
    pub page: Outcome,
}

/// What a finished run hands the tab.
#[derive(Debug, Clone)]
pub struct AblateDone {
    /// The variants, the baseline first.
    pub variants: Vec<VariantStats>,
    /// The changed pages of each variant, by variant index.
    pub changed: HashMap<usize, Vec<ChangedPage>>,
}

/// Why a run ended without a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AblateStop {
    Cancelled,
    Failed(String),
}

/// A changed call opened side by side.
#[derive(Debug)]
pub struct OpenDiff {
    pub rows: Vec<CompareRow>,
    pub scroll: usize,
    /// Cut from a column (h/l) or wrapped (z), as the replay view.
    pub view: RowView,
}

/// Where the ablate mode is.
#[derive(Debug)]
pub enum AblatePhase {
    /// Typing the `--set` values (empty: [`SUGGESTED_SET`]).
    Asking(Input),
    Running {
        variants: Vec<Map<String, Value>>,
        progress: Option<AblateProgress>,
    },
    Stopped(AblateStop),
    Done {
        done: Box<AblateDone>,
        /// The selected variant (0: the baseline).
        variant: usize,
        /// The selected call among the variant's changed ones.
        call: usize,
        diff: Option<OpenDiff>,
    },
}

/// The ablate mode of one transcript.
#[derive(Debug)]
pub struct AblateState {
    pub file: PathBuf,
    /// The run this state waits for; outcomes of others are ignored.
    pub generation: u64,
    pub phase: AblatePhase,
}

/// A key of the ablate mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AblateMove {
    Up,
    Down,
    NextCall,
    PrevCall,
    Open,
    Back,
}

impl AblateState {
    /// Asks for the `--set` values of an ablation of `file`: an empty
    /// input, [`SUGGESTED_SET`] its placeholder.
    pub fn asking(file: PathBuf, generation: u64) -> Self {
        Self {
            file,
            generation,
            phase: AblatePhase::Asking(Input::default()),
        }
    }

    /// The changed pages of the selected variant.
    pub fn changed_calls(&self) -> &[ChangedPage] {
        match &self.phase {
            AblatePhase::Done { done, variant, .. } => {
                done.changed.get(variant).map_or(&[], Vec::as_slice)
            }
            _ => &[],
        }
    }

    /// Scrolls the opened call's rows sideways or toggles wrapping (h/l,
    /// z, as in the replay view); the status text, which says to open a
    /// call first when none is open.
    pub fn change_view(&mut self, action: TranscriptAction) -> Option<String> {
        match &mut self.phase {
            AblatePhase::Done {
                diff: Some(open), ..
            } => open.view.change(action, &open.rows),
            _ => Some("h/l and z scroll an opened call: Enter opens one".to_owned()),
        }
    }

    /// Carries out a key of the result view; false: the key leaves the
    /// ablate mode (b with no diff open).
    pub fn apply(&mut self, key: AblateMove) -> bool {
        let AblatePhase::Done {
            done,
            variant,
            call,
            diff,
        } = &mut self.phase
        else {
            return key != AblateMove::Back;
        };
        if let Some(open) = diff {
            match key {
                AblateMove::Up => open.scroll = open.scroll.saturating_sub(1),
                AblateMove::Down => {
                    open.scroll = (open.scroll + 1).min(open.rows.len().saturating_sub(1));
                }
                AblateMove::Back => *diff = None,
                _ => {}
            }
            return true;
        }
        let calls = done.changed.get(variant).map_or(0, Vec::len);
        match key {
            AblateMove::Up => {
                *variant = variant.saturating_sub(1);
                *call = 0;
            }
            AblateMove::Down => {
                *variant = (*variant + 1).min(done.variants.len().saturating_sub(1));
                *call = 0;
            }
            AblateMove::NextCall => *call = (*call + 1).min(calls.saturating_sub(1)),
            AblateMove::PrevCall => *call = call.saturating_sub(1),
            AblateMove::Open => {
                if let Some(page) = done.changed.get(variant).and_then(|c| c.get(*call)) {
                    let rows = side_by_side(&page.baseline, &page.page);
                    // Open at the first difference, with a little context.
                    let scroll = rows
                        .iter()
                        .position(CompareRow::changed)
                        .map_or(0, |i| i.saturating_sub(3));
                    *diff = Some(OpenDiff {
                        rows,
                        scroll,
                        view: RowView::default(),
                    });
                }
            }
            AblateMove::Back => return false,
        }
        true
    }
}

/// Page tokens per call as at most `buckets` equal ranges from 0 to the
/// largest: each range's label (its upper bound) and how many calls fall
/// in it.
pub(crate) fn histogram(tokens: &[u64], buckets: usize) -> Vec<(String, u64)> {
    let Some(max) = tokens.iter().copied().max() else {
        return Vec::new();
    };
    let buckets = buckets.max(1) as u64;
    let width = (max / buckets + 1).max(1);
    let count = max / width + 1;
    let mut counts = vec![0u64; count as usize];
    for t in tokens {
        if let Some(slot) = counts.get_mut((t / width) as usize) {
            *slot += 1;
        }
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, n)| (format!("≤{}", (i as u64 + 1) * width - 1), n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_counts_every_call_in_equal_ranges_up_to_the_largest() {
        let buckets = histogram(&[0, 5, 9, 10, 79], 8);
        assert_eq!(buckets.len(), 8);
        assert_eq!(buckets.iter().map(|(_, n)| n).sum::<u64>(), 5);
        assert_eq!(buckets[0], ("≤9".to_owned(), 3));
        assert_eq!(buckets[1], ("≤19".to_owned(), 1));
        assert_eq!(buckets[7], ("≤79".to_owned(), 1));
        assert_eq!(
            histogram(&[3, 3], 8),
            vec![
                ("≤0".to_owned(), 0),
                ("≤1".to_owned(), 0),
                ("≤2".to_owned(), 0),
                ("≤3".to_owned(), 2)
            ]
        );
        assert!(histogram(&[], 8).is_empty());
    }
}
