//! The task behind `Effect::Ablate`: loads the chosen transcript, runs
//! [`crate::ablate::ablate`] over it off the UI, reports each call's
//! progress as `AppEvent::AblateProgress`, keeps the pages that differ
//! from the baseline's (to diff them), and ends with `AppEvent::Ablated`.
//! Its cancellation token is the ablation's own: cancelling it stops the
//! run before its next page.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::effects::AppEvent;
use super::state::ablate::{AblateDone, AblateStop, ChangedPage};
use crate::ablate::{AblateError, Control, Input, PageEvent, Progress, ablate};
use crate::tokens::SharedTokenizer;

/// Ablates `file` over `variants`, reporting to `events` under
/// `generation`; the outcome is sent as `AppEvent::Ablated`.
pub async fn run(
    generation: u64,
    file: &Path,
    variants: &[Map<String, Value>],
    tokenizer: SharedTokenizer,
    cancel: CancellationToken,
    events: mpsc::UnboundedSender<AppEvent>,
) {
    let outcome = ablate_file(generation, file, variants, &tokenizer, cancel, &events).await;
    let _ = events.send(AppEvent::Ablated {
        generation,
        outcome,
    });
}

async fn ablate_file(
    generation: u64,
    file: &Path,
    variants: &[Map<String, Value>],
    tokenizer: &SharedTokenizer,
    cancel: CancellationToken,
    events: &mpsc::UnboundedSender<AppEvent>,
) -> Result<Box<AblateDone>, AblateStop> {
    let input = Input::load(file, None).map_err(|e| AblateStop::Failed(e.to_string()))?;
    let progress_events = events.clone();
    let mut progress = move |progress: Progress| {
        let _ = progress_events.send(AppEvent::AblateProgress {
            generation,
            progress,
        });
    };
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
    let control = Control {
        cancel,
        progress: &mut progress,
        pages: &mut pages,
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
