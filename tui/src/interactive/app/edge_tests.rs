//! Unit tests of the TUI's rough edges: where the
//! keyboard goes after a call runs, what `d` says when nothing differs,
//! the Config tab's `a`, the Transcript tab's sideways view and its path
//! prompt.

use ratatui::crossterm::event::KeyCode;
use serde_json::json;

use super::tests::{app, finish, glob_result, press, run_effect, type_text};
use super::*;

#[test]
fn enter_runs_the_call_and_hands_the_keyboard_to_the_result() {
    let mut app = app();
    press(&mut app, KeyCode::Char('e'));
    type_text(&mut app, "*.rs");
    let (id, _, args) = run_effect(&press(&mut app, KeyCode::Enter));
    assert_eq!(args, json!({"pattern": "*.rs"}));
    assert_eq!(app.state.editing, None, "the result has the keyboard");
    finish(&mut app, id, glob_result(&["a.rs"], 10, None));
    // Browsing keys now act on the result instead of typing.
    press(&mut app, KeyCode::Char('2'));
    assert_eq!(app.state.tab, Tab::Value);
    assert_eq!(app.state.editor.pattern.value(), "*.rs");
    // Esc (the old "done") changes nothing; e edits the pattern again.
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.state.editing, None);
    press(&mut app, KeyCode::Char('e'));
    assert_eq!(app.state.editing, Some(Editing::Call(Field::Pattern)));
    type_text(&mut app, "x");
    assert_eq!(app.state.editor.pattern.value(), "*.rsx");
}

#[test]
fn a_refused_call_keeps_the_keyboard_in_the_field() {
    let mut app = app();
    press(&mut app, KeyCode::Char('A'));
    type_text(&mut app, "{");
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert_eq!(app.state.editing, Some(Editing::Call(Field::Args)));
}

#[test]
fn d_before_any_replay_says_what_it_needs() {
    let mut app = app();
    press(&mut app, KeyCode::Char('8'));
    assert!(press(&mut app, KeyCode::Char('d')).is_empty());
    let status = app.state.status.as_ref().expect("a status");
    assert!(!status.alert);
    assert_eq!(
        status.text,
        "d steps through a replayed transcript's differences: Enter replays the chosen one first"
    );
}

#[test]
fn config_a_reloads_the_unchanged_config_and_its_help_says_when_to_use_it() {
    let mut app = app();
    app.start();
    press(&mut app, KeyCode::Char('6'));
    let effects = press(&mut app, KeyCode::Char('a'));
    assert_eq!(
        effects,
        vec![Effect::Load {
            generation: 2,
            config: json!({"sampleOverCapGlobResults": true})
        }]
    );
    let binding = keymap::BINDINGS
        .iter()
        .find(|b| b.context == keymap::Context::Tab(Tab::Config) && b.action == Action::ApplyConfig)
        .expect("a is bound");
    assert_eq!(binding.short, "reload");
    assert!(binding.help.contains("unchanged"), "{}", binding.help);
    assert!(binding.help.contains("failed load"), "{}", binding.help);
}
