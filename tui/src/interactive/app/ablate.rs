//! The ablate mode of the Transcript tab, [`App`]'s part: asking for the
//! `--set` grid, starting the ablation, and taking the progress and the
//! outcome of the latest one only.

use crate::interactive::effects::Effect;
use crate::interactive::keymap::Action;
use crate::interactive::state::Editing;
use crate::interactive::state::ablate::{
    AblateDone, AblateMove, AblatePhase, AblateState, AblateStop, SUGGESTED_SET,
};
use crate::interactive::state::tokens::TokenizerStatus;
use crate::interactive::state::transcript::TranscriptAction;
use fs_search_transcript::AblateProgress;
use fs_search_transcript::{ablate_variants, parse_ablate_setting};

use super::App;

/// An outcome of an ablation, as `App::ablation_event` takes it.
pub(super) enum AblateEvent {
    Progress(AblateProgress),
    Ended(Result<Box<AblateDone>, AblateStop>),
}

impl App {
    /// Carries out a Transcript tab key in (or into) the ablate mode.
    pub(super) fn ablate_action(&mut self, action: TranscriptAction) -> Vec<Effect> {
        let running = matches!(
            &self.state.ablate,
            Some(AblateState {
                phase: AblatePhase::Running { .. },
                ..
            })
        );
        let key = match action {
            TranscriptAction::Ablate => {
                if running {
                    self.say("an ablation is running; Esc cancels it", false);
                    return Vec::new();
                }
                return self.ask_ablation();
            }
            TranscriptAction::CancelAblation => {
                if running {
                    self.say("cancelling the ablation", false);
                    return vec![Effect::CancelAblation];
                }
                // No ablation to cancel: Esc closes a replayed record's "why".
                return self.apply(Action::CloseWhy);
            }
            TranscriptAction::Up => AblateMove::Up,
            TranscriptAction::Down => AblateMove::Down,
            TranscriptAction::NextRecord => AblateMove::NextCall,
            TranscriptAction::PrevRecord => AblateMove::PrevCall,
            TranscriptAction::Open => AblateMove::Open,
            TranscriptAction::Back => AblateMove::Back,
            _ => return Vec::new(),
        };
        let Some(ablate) = &mut self.state.ablate else {
            return Vec::new();
        };
        if ablate.apply(key) {
            return Vec::new();
        }
        self.state.ablate = None;
        if running {
            return vec![Effect::CancelAblation];
        }
        Vec::new()
    }

    /// Asks for the `--set` values of an ablation of the chosen transcript.
    pub(super) fn ask_ablation(&mut self) -> Vec<Effect> {
        let Some(file) = self.state.transcripts.selected_file() else {
            self.say("no transcript to ablate", false);
            return Vec::new();
        };
        self.state.ablate = Some(AblateState::asking(file, self.ablations.next()));
        self.state.editing = Some(Editing::Ablate);
        Vec::new()
    }

    /// Enter on the `--set` values: parses them and starts the run.
    pub(super) fn start_ablation(&mut self) -> Vec<Effect> {
        let Some(AblateState {
            phase: AblatePhase::Asking(input),
            file,
            generation,
        }) = &mut self.state.ablate
        else {
            self.state.editing = None;
            return Vec::new();
        };
        let typed = input.value();
        let values = if typed.trim().is_empty() {
            SUGGESTED_SET
        } else {
            typed
        };
        let variants = values
            .split_whitespace()
            .map(parse_ablate_setting)
            .collect::<Result<Vec<_>, _>>()
            .and_then(|settings| ablate_variants(&settings));
        let variants = match variants {
            Ok(variants) => variants,
            Err(e) => {
                let text = e.to_string();
                self.say(text, true);
                return Vec::new();
            }
        };
        let TokenizerStatus::Ready(tokenizer) = &self.state.tokens.tokenizer else {
            self.say(
                "the tokenizer is not ready: the ablation counts page tokens",
                true,
            );
            return Vec::new();
        };
        let effect = Effect::Ablate {
            generation: *generation,
            file: file.clone(),
            variants: variants.clone(),
            tokenizer: tokenizer.clone(),
        };
        self.state.ablate = self.state.ablate.take().map(|a| AblateState {
            phase: AblatePhase::Running {
                variants,
                progress: None,
            },
            ..a
        });
        self.state.editing = None;
        vec![effect]
    }

    /// An outcome of ablation `generation` (others are ignored).
    pub(super) fn ablation_event(&mut self, generation: u64, event: AblateEvent) {
        let Some(ablate) = self
            .state
            .ablate
            .as_mut()
            .filter(|a| a.generation == generation)
        else {
            return;
        };
        match event {
            AblateEvent::Progress(progress) => {
                if let AblatePhase::Running {
                    progress: shown, ..
                } = &mut ablate.phase
                {
                    *shown = Some(progress);
                }
            }
            AblateEvent::Ended(Ok(done)) => {
                let variant = done.variants.len().saturating_sub(1).min(1);
                ablate.phase = AblatePhase::Done {
                    done,
                    variant,
                    call: 0,
                    diff: None,
                };
            }
            AblateEvent::Ended(Err(stop)) => {
                let (text, alert) = match &stop {
                    AblateStop::Cancelled => ("the ablation was cancelled".to_owned(), false),
                    AblateStop::Failed(e) => (format!("the ablation failed: {e}"), true),
                };
                ablate.phase = AblatePhase::Stopped(stop);
                self.say(text, alert);
            }
        }
    }
}
