//! The task behind `Effect::Ablate`: loads the chosen transcript, runs
//! [`fs_search_transcript::ablate`] over it off the UI, reports each call's
//! progress to its caller (the effect runner sends it on as
//! `AppEvent::AblateProgress`), keeps the pages that differ from the
//! baseline's (to diff them), and returns the outcome. It knows nothing
//! of the effect runner's messages, so the two modules stay one-way.
//! Its cancellation token is the ablation's own: cancelling it stops the
//! run before its next page.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::state::ablate::{AblateDone, AblateStop, ChangedPage};
use fs_search_process::SharedTokenizer;
use fs_search_transcript::{
    AblateControl, AblateError, AblateInput, AblateProgress, PageEvent, ablate,
};

/// Ablates `file` over `variants` (as the release its header names, with
/// the session's `--rg` binary `rg`), telling `on_progress` of each call
/// done; the outcome (the effect runner sends it as `AppEvent::Ablated`).
pub(crate) async fn run(
    file: &Path,
    variants: &[Map<String, Value>],
    tokenizer: &SharedTokenizer,
    rg: Option<std::path::PathBuf>,
    cancel: CancellationToken,
    on_progress: impl FnMut(AblateProgress) + Send,
) -> Result<Box<AblateDone>, AblateStop> {
    let input = AblateInput::load(file, None).map_err(|e| AblateStop::Failed(e.to_string()))?;
    let mut progress = on_progress;
    let mut changed: HashMap<usize, Vec<ChangedPage>> = HashMap::new();
    let mut pages = |event: PageEvent<'_>| {
        if event.variant > 0 && event.page.text != event.baseline.text {
            changed.entry(event.variant).or_default().push(ChangedPage {
                record: event.record,
                name: event.name.to_owned(),
                baseline: event.baseline.clone(),
                page: event.page.clone(),
            });
        }
    };
    let control = AblateControl {
        cancel,
        progress: &mut progress,
        pages: &mut pages,
        executor: fs_search_process::ExecutorKind::Local,
        contract: None,
        rg,
    };
    match ablate(
        std::slice::from_ref(&input),
        variants,
        &tokenizer.0,
        control,
    )
    .await
    {
        Ok(ablation) => Ok(Box::new(AblateDone {
            variants: ablation.variants,
            changed,
        })),
        Err(AblateError::Cancelled) => Err(AblateStop::Cancelled),
        Err(e) => Err(AblateStop::Failed(e.to_string())),
    }
}
