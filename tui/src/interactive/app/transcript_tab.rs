//! The Transcript tab's part of [`App`]: its keys (open, replay,
//! follow, record), and completing and adding typed transcript paths.

use std::path::PathBuf;

use crate::interactive::effects::Effect;
use crate::interactive::state::Editing;
use crate::interactive::state::transcript::TranscriptAction;

use super::App;

impl App {
    /// Carries out a key of the Transcript tab (or R).
    pub(super) fn transcript_action(&mut self, action: TranscriptAction) -> Vec<Effect> {
        if action == TranscriptAction::Follow {
            let Some(path) = self.state.transcripts.selected_file() else {
                self.say("no transcript to follow", false);
                return Vec::new();
            };
            let same = |a: &std::path::Path| {
                a == path
                    || a.canonicalize()
                        .is_ok_and(|a| path.canonicalize().is_ok_and(|b| a == b))
            };
            if self.state.follow.as_ref().is_some_and(|f| same(&f.path)) {
                self.state.follow = None;
                self.say(format!("stopped following {}", path.display()), false);
                return vec![Effect::StopFollowing];
            }
            return self.follow(path);
        }
        if action == TranscriptAction::ToggleRecording {
            let state = &mut self.state;
            let (text, alert) = match state
                .transcripts
                .toggle_recording(&state.session, &state.applied)
            {
                Ok(text) => (text, false),
                Err(text) => (text, true),
            };
            self.say(text, alert);
            return Vec::new();
        }
        match action {
            TranscriptAction::Sideways(_) | TranscriptAction::ToggleWrap => {
                let text = match &mut self.state.ablate {
                    Some(ablate) => ablate.change_view(action),
                    None => self.state.transcripts.change_view(action),
                };
                if let Some(text) = text {
                    self.say(text, false);
                }
                return Vec::new();
            }
            TranscriptAction::OpenPath => {
                self.state.transcripts.prompt = Some(tui_input::Input::default());
                self.state.editing = Some(Editing::TranscriptPath);
                return Vec::new();
            }
            _ => {}
        }
        if matches!(
            action,
            TranscriptAction::Ablate | TranscriptAction::CancelAblation
        ) || self.state.ablate.is_some()
        {
            return self.ablate_action(action);
        }
        if action == TranscriptAction::NextChanged
            && let Some(note) = self.state.transcripts.next_changed_note()
        {
            self.say(note, false);
            return Vec::new();
        }
        match self.state.transcripts.apply(action) {
            Some(path) => vec![Effect::ReplayTranscript { path }],
            None => Vec::new(),
        }
    }

    /// Tab in the Transcript tab's path prompt: completes the path from
    /// the current directory (`~/` is home).
    pub(super) fn complete_transcript_path(&mut self) {
        let Some(input) = &mut self.state.transcripts.prompt else {
            return;
        };
        let typed = input.value().to_owned();
        let (home, rest) = match (typed.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => (Some(PathBuf::from(home)), rest.to_owned()),
            _ => (None, typed.clone()),
        };
        let root = match &home {
            Some(home) => home.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        };
        let done = crate::interactive::completion::complete(&root, &rest);
        if done.text != rest {
            let text = match home {
                Some(_) => format!("~/{}", done.text),
                None => done.text.clone(),
            };
            *input = input.clone().with_value(text);
        }
        match done.candidates.len() {
            0 => self.say(format!("nothing starts with `{typed}`"), false),
            1 => {}
            _ => self.say(done.candidates.join("  "), false),
        }
    }

    /// Enter in the Transcript tab's path prompt: adds the typed file to
    /// the list and chooses it (a missing file too: it can be followed
    /// until it appears); a directory or an empty path keeps the prompt.
    pub(super) fn add_typed_transcript(&mut self) {
        let typed = self
            .state
            .transcripts
            .prompt
            .as_ref()
            .map(|i| i.value().trim().to_owned())
            .unwrap_or_default();
        if typed.is_empty() {
            self.say("type the path of a transcript (Tab completes it)", false);
            return;
        }
        let path = match (typed.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
            _ => PathBuf::from(&typed),
        };
        let path = std::path::absolute(&path).unwrap_or(path);
        if path.is_dir() {
            self.say(
                format!(
                    "{} is a directory: type a file in it (Tab lists them)",
                    path.display()
                ),
                true,
            );
            return;
        }
        let text = if path.exists() {
            format!(
                "added {}: Enter replays it, f follows it, a ablates it",
                path.display()
            )
        } else {
            format!(
                "{} does not exist yet: f follows it and waits for it to appear",
                path.display()
            )
        };
        self.state.transcripts.add_file(path);
        self.state.transcripts.prompt = None;
        self.state.editing = None;
        self.say(text, false);
    }
}
