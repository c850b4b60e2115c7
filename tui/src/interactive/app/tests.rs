//! Unit tests of the app's update logic, without a terminal: keys and
//! effect outcomes in, state and effects out.

use std::time::Duration;

use fs_search_engine::RG_MISSING_WARNING;
use fs_search_engine::helpers::render_glob;
use fs_search_engine::render::SearchMeta;
use fs_search_engine::spill::SpillRef;
use fs_search_engine::value::{GlobValue, ToolValue};
use fs_search_engine::{Config, SearchCode, SearchError, ToolError, ToolResult};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};

use fs_search_transcript::Record;
use fs_search_transcript::Update;

use super::*;
use crate::interactive::state::Viewport;
use crate::interactive::state::explain::{ExplainCall, ExplainQuery, ExplainSource, ExplainTarget};
use crate::interactive::state::follow::FollowStatus;

pub(super) fn app() -> App {
    let session = SessionInfo {
        workdir: "/work/tree".into(),
        session_id: "session-test".into(),
        spill_root: None,
        recordings_dir: "/work/recordings".into(),
        log_path: None,
        rg: fs_search_process::RgInfo::default(),
        executor: None,
        contract: Default::default(),
    };
    App::new(session, &json!({"sampleOverCapGlobResults": true}))
}

pub(super) fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    app.handle_key(&KeyEvent::new(code, KeyModifiers::NONE))
}

pub(super) fn ctrl(app: &mut App, c: char) -> Vec<Effect> {
    app.handle_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub(super) fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        assert!(press(app, KeyCode::Char(c)).is_empty());
    }
}

pub(super) fn run_effect(effects: &[Effect]) -> (u64, String, Value) {
    match effects {
        [Effect::Run { id, tool, args, .. }] => (*id, tool.clone(), args.clone()),
        other => panic!("expected one Run effect, got {other:?}"),
    }
}

/// A glob result as the engine renders it for `paths` with `cap` paths
/// inline (modification-time head, no sampling) and `spill` saved.
pub(super) fn glob_result(paths: &[&str], cap: u64, spill: Option<SpillRef>) -> ToolResult {
    let value = GlobValue {
        root: ".".into(),
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
    };
    let config = Config {
        glob_max_results: cap.into(),
        ..Config::with_sampling(false)
    };
    let page = render_glob(&value, &config, spill.as_ref());
    let meta = SearchMeta::Paths {
        paths: value.paths.clone(),
        truncated: spill.is_some(),
        total: paths.len() as u64,
    };
    let mut result = ToolResult::success("glob", page, ToolValue::Glob(value), Some(meta));
    result.spill = spill;
    result
}

pub(super) fn finish(app: &mut App, id: u64, result: ToolResult) {
    app.on_event(AppEvent::Finished {
        id,
        result: Box::new(result),
        duration: Duration::from_millis(12),
        commands: Vec::new(),
    });
}

/// Runs a glob for `pattern` and finishes it with `result`.
pub(super) fn run_and_finish(app: &mut App, pattern: &str, result: ToolResult) -> u64 {
    press(app, KeyCode::Char('e'));
    ctrl(app, 'u');
    type_text(app, pattern);
    let (id, _, _) = run_effect(&press(app, KeyCode::Enter));
    press(app, KeyCode::Esc);
    finish(app, id, result);
    id
}

#[test]
fn start_loads_the_plugin_with_the_starting_config() {
    let mut app = app();
    let effects = app.start();
    assert_eq!(
        effects,
        vec![Effect::Load {
            generation: 1,
            config: json!({"sampleOverCapGlobResults": true})
        }]
    );
    assert_eq!(app.state.plugin, PluginStatus::Loading);
}

#[test]
fn typing_a_grep_and_pressing_enter_runs_it_with_the_exact_arguments() {
    let mut app = app();
    press(&mut app, KeyCode::Char('t'));
    press(&mut app, KeyCode::Char('e'));
    assert_eq!(app.state.editing, Some(Editing::Call(Field::Pattern)));
    type_text(&mut app, "fn main");
    press(&mut app, KeyCode::Tab);
    type_text(&mut app, "src");
    press(&mut app, KeyCode::Tab);
    type_text(&mut app, "*.rs");
    let (id, tool, args) = run_effect(&press(&mut app, KeyCode::Enter));
    assert_eq!((id, tool.as_str()), (1, "grep"));
    assert_eq!(
        serde_json::to_string(&args).unwrap(),
        r#"{"pattern":"fn main","path":"src","include":"*.rs"}"#
    );
    let running = app.state.running.as_ref().expect("running");
    assert_eq!(running.config, json!({"sampleOverCapGlobResults": true}));
}

#[test]
fn a_second_run_while_one_is_running_is_refused() {
    let mut app = app();
    run_effect(&press(&mut app, KeyCode::Enter));
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    let status = app.state.status.as_ref().expect("status");
    assert!(
        status.alert && status.text.contains("still running"),
        "{status:?}"
    );
}

#[test]
fn q_types_into_a_field_but_quits_when_browsing() {
    let mut app = app();
    press(&mut app, KeyCode::Char('e'));
    type_text(&mut app, "q?");
    assert_eq!(app.state.editor.pattern.value(), "q?");
    assert!(!app.state.should_quit && app.state.overlay.is_none());
    press(&mut app, KeyCode::Esc);
    assert!(press(&mut app, KeyCode::Char('q')).is_empty());
    assert!(app.state.should_quit);
}

#[test]
fn ctrl_c_quits_even_while_editing_and_cancels_a_running_call() {
    let mut app = app();
    run_effect(&press(&mut app, KeyCode::Enter));
    press(&mut app, KeyCode::Char('e'));
    assert_eq!(ctrl(&mut app, 'c'), vec![Effect::Cancel]);
    assert!(app.state.should_quit);
}

#[test]
fn the_cancel_key_cancels_only_a_running_call() {
    let mut app = app();
    assert!(press(&mut app, KeyCode::Char('x')).is_empty());
    assert_eq!(
        app.state.status.as_ref().unwrap().text,
        "no call is running"
    );
    let (id, _, _) = run_effect(&press(&mut app, KeyCode::Enter));
    assert_eq!(press(&mut app, KeyCode::Char('x')), vec![Effect::Cancel]);
    // the abort result comes back like any other result
    let aborted = ToolResult::failure("glob", &ToolError::Aborted);
    finish(&mut app, id, aborted);
    assert!(app.state.running.is_none());
    assert_eq!(
        app.state.status, None,
        "the result's summary replaces the message"
    );
    let shown = app.state.shown_record().unwrap();
    assert_eq!(
        shown.ran().unwrap().code().map(|c| c.code()),
        Some("ABORTED")
    );
    assert_eq!(shown.text(), "Error: tool call aborted");
}

#[test]
fn a_finished_call_is_recorded_shown_and_its_footer_marked() {
    let mut app = app();
    let locator = "/tmp/dsh-spill-x/session-1/abc-glob.txt";
    let text = format!(
        "a\nb\n\n(Showing 2 of 3 paths. Full sorted result stored at: {locator}. Use read.)"
    );
    let spill = SpillRef {
        locator: locator.into(),
        bytes: 5,
        retrieval_hint: "Use read.".into(),
    };
    run_and_finish(&mut app, "*", glob_result(&["a", "b", "c"], 2, Some(spill)));
    assert_eq!(app.state.history[0].text(), text);
    assert_eq!(app.state.history.len(), 1);
    assert_eq!(app.state.shown, Some(0));
    let doc = content::tab_doc(&app.state, Tab::Text).unwrap();
    let kinds: Vec<LineKind> = doc.lines.iter().map(|l| l.kind).collect();
    assert_eq!(
        kinds,
        [
            LineKind::Body,
            LineKind::Body,
            LineKind::Body,
            LineKind::Footer
        ]
    );
    let footer = &doc.lines[3];
    assert_eq!(&footer.text[footer.mark.clone().unwrap()], locator);
    // the lines are the text, unchanged
    let joined: Vec<&str> = doc.lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(joined.join("\n"), text);
}

#[test]
fn value_meta_and_call_tabs_show_the_structured_parts() {
    let mut app = app();
    run_and_finish(&mut app, "*", glob_result(&["a"], 100, None));
    let text_of = |app: &App, tab| {
        content::tab_doc(&app.state, tab)
            .unwrap()
            .lines
            .iter()
            .map(|l| l.text.clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        text_of(&app, Tab::Value),
        "{\n  \"root\": \".\",\n  \"paths\": [\n    \"a\"\n  ]\n}"
    );
    assert!(text_of(&app, Tab::Meta).contains("\"shape\": \"paths\""));
    let details = text_of(&app, Tab::Call);
    assert!(
        details.contains(r#"args sent   {"pattern":"*"}"#),
        "{details}"
    );
    assert!(details.contains("isError     false"));
}

#[test]
fn an_error_result_keeps_its_name_and_code() {
    let mut app = app();
    let error = ToolError::from(SearchError::new(SearchCode::InvalidPattern, "bad regex"));
    run_and_finish(&mut app, "(", ToolResult::failure("grep", &error));
    let details: Vec<String> = content::tab_doc(&app.state, Tab::Call)
        .unwrap()
        .lines
        .iter()
        .map(|l| l.text.clone())
        .collect();
    assert!(
        details
            .iter()
            .any(|l| l == r#"error       {name: "SearchError", code: "SEARCH_INVALID_PATTERN"}"#),
        "{details:?}"
    );
    assert!(
        content::tab_doc(&app.state, Tab::Value).unwrap().lines[0]
            .text
            .starts_with("null")
    );
}

#[test]
fn a_result_for_another_call_is_ignored() {
    let mut app = app();
    run_effect(&press(&mut app, KeyCode::Enter));
    finish(&mut app, 99, glob_result(&["a"], 100, None));
    assert!(app.state.history.is_empty());
    assert!(app.state.running.is_some());
}

#[test]
fn a_lost_call_stops_running_and_says_so() {
    let mut app = app();
    let (id, _, _) = run_effect(&press(&mut app, KeyCode::Enter));
    app.on_event(AppEvent::Lost {
        id,
        reason: "panicked".into(),
    });
    assert!(app.state.running.is_none());
    assert!(app.state.status.as_ref().unwrap().text.contains("panicked"));
}

#[test]
fn hand_edited_raw_arguments_are_sent_exactly() {
    let mut app = app();
    press(&mut app, KeyCode::Char('A'));
    ctrl(&mut app, 'u');
    type_text(&mut app, r#"{"pattern":1,"extra":"x"}"#);
    let (_, tool, args) = run_effect(&press(&mut app, KeyCode::Enter));
    assert_eq!(tool, "glob");
    assert_eq!(args, json!({"pattern": 1, "extra": "x"}));
    assert!(app.state.editor.raw_edited);
}

#[test]
fn raw_arguments_that_are_not_json_are_not_sent() {
    let mut app = app();
    press(&mut app, KeyCode::Char('A'));
    type_text(&mut app, "}");
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert!(app.state.running.is_none());
    assert!(
        app.state
            .status
            .as_ref()
            .unwrap()
            .text
            .starts_with("args are not valid JSON")
    );
}

#[test]
fn editing_a_cap_and_pressing_enter_reloads_with_the_typed_value() {
    let mut app = app();
    app.start();
    press(&mut app, KeyCode::Char('6'));
    assert_eq!(app.state.tab, Tab::Config);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.state.editing, Some(Editing::Config));
    type_text(&mut app, "0");
    let effects = press(&mut app, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![Effect::Load {
            generation: 2,
            config: json!({"sampleOverCapGlobResults": true, "globMaxResults": 0})
        }]
    );
    assert_eq!(app.state.editing, None);
    let error = "tool-fs-search: globMaxResults must be a positive integer";
    app.on_event(AppEvent::Loaded {
        generation: 2,
        outcome: Err(error.into()),
    });
    assert_eq!(app.state.plugin, PluginStatus::Failed(error.into()));
    assert_eq!(app.state.status.as_ref().unwrap().text, error);
    assert!(
        app.state
            .surface
            .lines
            .iter()
            .any(|l| l.text.contains("globMaxResults must be a positive integer"))
    );
}

#[test]
fn a_stale_load_outcome_is_ignored() {
    let mut app = app();
    app.start();
    press(&mut app, KeyCode::Char('6'));
    press(&mut app, KeyCode::Char(' '));
    app.on_event(AppEvent::Loaded {
        generation: 1,
        outcome: Err("old".into()),
    });
    assert_eq!(app.state.plugin, PluginStatus::Loading);
}

#[test]
fn space_flips_sampling_and_reloads() {
    let mut app = app();
    app.start();
    press(&mut app, KeyCode::Char('6'));
    let effects = press(&mut app, KeyCode::Char(' '));
    assert_eq!(
        effects,
        vec![Effect::Load {
            generation: 2,
            config: json!({"sampleOverCapGlobResults": false})
        }]
    );
}

#[test]
fn a_loaded_plugin_fills_the_surface_and_rg_missing_explains_the_fix() {
    let mut app = app();
    app.start();
    let config = fs_search_engine::Config::with_sampling(true);
    let info = LoadInfo {
        sections: fs_search_engine::helpers::prompt_sections(&config).to_vec(),
        tools: fs_search_engine::helpers::tool_definitions(&config),
        warnings: Vec::new(),
    };
    app.on_event(AppEvent::Loaded {
        generation: 1,
        outcome: Ok(info),
    });
    assert_eq!(app.state.plugin, PluginStatus::Registered);
    let surface: Vec<&str> = app
        .state
        .surface
        .lines
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert!(surface.contains(&"== section tool:glob · order 103 =="));
    assert!(surface.contains(&fs_search_engine::helpers::GREP_PROMPT_TEXT));

    let effects = app.apply(Action::ApplyConfig);
    assert_eq!(effects.len(), 1);
    app.on_event(AppEvent::Loaded {
        generation: 2,
        outcome: Ok(LoadInfo {
            sections: Vec::new(),
            tools: Vec::new(),
            warnings: vec![RG_MISSING_WARNING.to_owned()],
        }),
    });
    assert_eq!(
        app.state.plugin,
        PluginStatus::RgMissing(RG_MISSING_WARNING.to_owned())
    );
    let welcome: Vec<&str> = app
        .state
        .welcome
        .lines
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert!(welcome.iter().any(|l| l.contains(RG_MISSING_WARNING)));
    assert!(
        welcome
            .iter()
            .any(|l| l.contains("apt-get install ripgrep"))
    );
}

#[test]
fn an_unknown_config_key_is_warned_of_in_the_status_line_with_the_nearest_key() {
    let session = app().state.session.clone();
    let config = json!({"sampleOverCapGlobResults": true, "grepMaxMatch": 5});
    let mut app = App::new(session, &config);
    let effects = app.start();
    // The engine gets the config as given: it ignores the key.
    assert_eq!(
        effects,
        vec![Effect::Load {
            generation: 1,
            config: config.clone()
        }]
    );
    let engine_config = fs_search_engine::Config::with_sampling(true);
    app.on_event(AppEvent::Loaded {
        generation: 1,
        outcome: Ok(LoadInfo {
            sections: fs_search_engine::helpers::prompt_sections(&engine_config).to_vec(),
            tools: fs_search_engine::helpers::tool_definitions(&engine_config),
            warnings: Vec::new(),
        }),
    });
    assert_eq!(app.state.plugin, PluginStatus::Registered);
    let status = app.state.status.clone().unwrap();
    assert!(status.alert);
    assert!(
        status.text.starts_with(
            "warning: config: \"grepMaxMatch\" is not a config key and is ignored (did you mean grepMaxMatches?"
        ),
        "{}",
        status.text
    );
}

#[test]
fn the_spill_key_opens_the_file_of_the_shown_result() {
    let mut app = app();
    press(&mut app, KeyCode::Char('o'));
    assert_eq!(app.state.status.as_ref().unwrap().text, "no call yet");
    run_and_finish(&mut app, "*", glob_result(&["a"], 100, None));
    assert!(press(&mut app, KeyCode::Char('o')).is_empty());
    assert_eq!(
        app.state.status.as_ref().unwrap().text,
        "this result has no spill file"
    );

    let spill = SpillRef {
        locator: "/s/1-glob.txt".into(),
        bytes: 3,
        retrieval_hint: "hint".into(),
    };
    let id = run_and_finish(&mut app, "*", glob_result(&["a", "b"], 1, Some(spill)));
    let effects = press(&mut app, KeyCode::Char('o'));
    assert_eq!(
        effects,
        vec![Effect::ReadSpill {
            id,
            path: "/s/1-glob.txt".into()
        }]
    );
    app.on_event(AppEvent::SpillRead {
        id,
        outcome: Ok(SpillContent {
            text: "a\nb".into(),
            total_bytes: 3,
        }),
    });
    match &app.state.overlay {
        Some(Overlay::Spill {
            state: SpillState::Loaded { doc, total_bytes },
            ..
        }) => {
            assert_eq!(*total_bytes, 3);
            assert_eq!(doc.lines.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    press(&mut app, KeyCode::Esc);
    assert!(app.state.overlay.is_none());
}

#[test]
fn help_opens_and_closes_and_scrolls_itself_not_the_result() {
    let mut app = app();
    press(&mut app, KeyCode::Char('?'));
    assert!(matches!(app.state.overlay, Some(Overlay::Help)));
    app.state.viewports.overlay = Viewport { cols: 60, rows: 5 };
    press(&mut app, KeyCode::Down);
    assert_eq!(app.state.overlay_scroll, 1);
    assert_eq!(app.state.scroll(Tab::Text), 0);
    press(&mut app, KeyCode::Char('?'));
    assert!(app.state.overlay.is_none());
}

#[test]
fn scrolling_is_clamped_to_the_document() {
    let mut app = app();
    let paths: Vec<String> = (0..30).map(|i| format!("f{i}")).collect();
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    run_and_finish(&mut app, "*", glob_result(&refs, 100_000, None));
    app.state.viewports.pane = Viewport { cols: 40, rows: 10 };
    press(&mut app, KeyCode::PageDown);
    assert_eq!(app.state.scroll(Tab::Text), 9);
    press(&mut app, KeyCode::End);
    assert_eq!(app.state.scroll(Tab::Text), 20);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.state.scroll(Tab::Text), 20);
    press(&mut app, KeyCode::Home);
    assert_eq!(app.state.scroll(Tab::Text), 0);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.state.scroll(Tab::Text), 0);
}

#[test]
fn history_selects_and_shows_an_earlier_call() {
    let mut app = app();
    run_and_finish(&mut app, "first", glob_result(&["a"], 100, None));
    run_and_finish(&mut app, "second", glob_result(&["b"], 100, None));
    assert_eq!(app.state.shown, Some(1));
    press(&mut app, KeyCode::Char('7'));
    assert_eq!(app.state.tab, Tab::History);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.state.history_selected, 0);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.state.shown, Some(0));
    assert_eq!(app.state.tab, Tab::Text);
    assert_eq!(
        app.state.shown_record().unwrap().args,
        json!({"pattern": "first"})
    );
    press(&mut app, KeyCode::Char(']'));
    assert_eq!(app.state.shown, Some(1));
}

#[test]
fn tabs_cycle_and_digits_jump() {
    let mut app = app();
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.state.tab, Tab::Value);
    press(&mut app, KeyCode::BackTab);
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.state.tab, Tab::Transcript);
    press(&mut app, KeyCode::Char('5'));
    assert_eq!(app.state.tab, Tab::Surface);
    press(&mut app, KeyCode::Char('9'));
    assert_eq!(app.state.tab, Tab::Surface);
}

#[test]
fn running_from_a_non_result_tab_switches_to_the_text() {
    let mut app = app();
    press(&mut app, KeyCode::Char('5'));
    run_effect(&press(&mut app, KeyCode::Char('r')));
    assert_eq!(app.state.tab, Tab::Text);
}

/// A record as a followed recording holds it (parsed like a replayed one).
fn recorded(name: &str, text: &str, error: Option<(&str, &str)>) -> Box<Record> {
    recorded_from(name, text, error, None)
}

/// A record of a grep call, made by the MCP client `client` (name,
/// version) when given.
fn recorded_from(
    name: &str,
    text: &str,
    error: Option<(&str, &str)>,
    client: Option<(&str, &str)>,
) -> Box<Record> {
    use fs_search_transcript::{Call, CallOptions, ClientInfo, Outcome, OutcomeError};
    use fs_search_transcript::{Header, TranscriptEnv, call_line, header_line, outcome_lines};
    let call = Call {
        name: name.into(),
        tool: "grep".into(),
        args: json!({"pattern": name}),
        options: CallOptions {
            config: json!({"grepMaxMatches": 3}).as_object().unwrap().clone(),
            client: client.map(|(name, version)| ClientInfo {
                name: name.into(),
                version: Some(version.into()),
            }),
            ..CallOptions::default()
        },
    };
    let outcome = Outcome {
        is_error: error.is_some(),
        error: error.map(|(name, code)| OutcomeError {
            name: Some(name.into()),
            code: Some(code.into()),
        }),
        spill: None,
        warnings: Vec::new(),
        text: text.into(),
        tokens: None,
    };
    let header = header_line(&Header {
        contract: Default::default(),
        tree: "work".into(),
        config: json!({}),
        env: TranscriptEnv {
            rg: "ripgrep".into(),
            ripgrep_config: Vec::new(),
            executor: None,
        },
    });
    let file = format!(
        "{header}{}{}",
        call_line(&call),
        outcome_lines(name, &outcome)
    );
    let transcript = fs_search_transcript::parse("rec.jsonl", &file).unwrap();
    Box::new(transcript.records.into_iter().next().unwrap())
}

/// Follows `/rec/live.jsonl` and reads its header (tree `work`, no
/// config): the follow reads records only behind it.
fn follow_live(app: &mut App) {
    app.follow(PathBuf::from("/rec/live.jsonl"));
    let header = fs_search_transcript::Header {
        contract: Default::default(),
        tree: "work".into(),
        config: json!({}),
        env: fs_search_transcript::TranscriptEnv {
            rg: "ripgrep".into(),
            ripgrep_config: Vec::new(),
            executor: None,
        },
    };
    followed(app, 1, Update::Header(Box::new(header)));
}

fn followed(app: &mut App, generation: u64, update: Update) {
    let effects = app.on_event(AppEvent::Followed { generation, update });
    assert!(effects.is_empty());
}

fn doc_text(app: &App, tab: Tab) -> String {
    let doc = content::tab_doc(&app.state, tab).unwrap();
    doc.lines
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn followed_records_join_the_history_and_the_newest_is_shown() {
    let mut app = app();
    app.state.tab = Tab::Config;
    let path = PathBuf::from("/rec/live.jsonl");
    assert_eq!(
        app.follow(path.clone()),
        vec![Effect::Follow {
            generation: 1,
            path: path.clone()
        }]
    );
    assert_eq!(app.state.tab, Tab::Text, "following shows the result tabs");
    followed(&mut app, 1, Update::Missing);
    assert_eq!(
        app.state.follow.as_ref().unwrap().status,
        FollowStatus::Waiting
    );
    let header = fs_search_transcript::Header {
        contract: Default::default(),
        tree: "work".into(),
        config: json!({"sampleOverCapGlobResults": false, "globMaxResults": 5}),
        env: fs_search_transcript::TranscriptEnv {
            rg: "ripgrep".into(),
            ripgrep_config: Vec::new(),
            executor: None,
        },
    };
    followed(&mut app, 1, Update::Header(Box::new(header)));
    followed(
        &mut app,
        1,
        Update::Record(recorded("call-1-grep", "Found 1 match\n\na.rs", None)),
    );
    assert_eq!(app.state.history.len(), 1);
    assert_eq!(app.state.shown, Some(0));
    let shown = app.state.shown_record().unwrap();
    assert_eq!(shown.text(), "Found 1 match\n\na.rs");
    assert_eq!(shown.call_id, "call-1-grep");
    assert_eq!(
        shown.config,
        json!({"sampleOverCapGlobResults": false, "globMaxResults": 5, "grepMaxMatches": 3}),
        "the header's config with the call's keys over it"
    );
    assert_eq!(doc_text(&app, Tab::Text), "Found 1 match\n\na.rs");
    assert!(doc_text(&app, Tab::Value).starts_with("not in the recording — the canonical value"));
    assert!(doc_text(&app, Tab::Meta).starts_with("not in the recording — the presentation meta"));
    let details = doc_text(&app, Tab::Call);
    assert!(
        details.starts_with("recorded call \"call-1-grep\" · grep"),
        "{details}"
    );
    assert!(
        details.contains("from        /rec/live.jsonl:2"),
        "{details}"
    );
    assert!(details.contains("duration    not recorded"), "{details}");
    // The spill key says why it cannot open a recorded call's spill.
    assert!(press(&mut app, KeyCode::Char('o')).is_empty());

    // A session call, then a followed error: the newest is shown.
    run_and_finish(&mut app, "*", glob_result(&["a"], 5, None));
    let error = Some(("SearchError", "SEARCH_INVALID_PATTERN"));
    followed(
        &mut app,
        1,
        Update::Record(recorded("call-2-grep", "Error: bad", error)),
    );
    assert_eq!(app.state.shown, Some(2));
    assert!(app.state.shown_record().unwrap().is_error());
    let parts =
        crate::interactive::views::summary_parts(app.state.shown_record().unwrap(), 2, 3, None);
    assert_eq!(
        parts
            .into_iter()
            .map(|(part, _)| part)
            .collect::<Vec<_>>()
            .join(" · "),
        "#3 grep (3/3) · isError {name: SearchError, code: SEARCH_INVALID_PATTERN} · recorded · 10 B text"
    );
    assert_eq!(app.state.follow.as_ref().unwrap().calls, 2);

    // Looking at an older call: a new record does not take the view away.
    press(&mut app, KeyCode::Char('['));
    followed(
        &mut app,
        1,
        Update::Record(recorded("call-3-grep", "x", None)),
    );
    assert_eq!((app.state.history.len(), app.state.shown), (4, Some(1)));

    // An update of an earlier follow is ignored.
    followed(
        &mut app,
        7,
        Update::Record(recorded("call-9-grep", "old", None)),
    );
    assert_eq!(app.state.history.len(), 4);

    // The file started over: its calls go, the session's stay.
    followed(&mut app, 1, Update::Restarted);
    assert_eq!(app.state.history.len(), 1);
    assert!(app.state.history[0].ran().is_some());
    assert_eq!(app.state.shown, Some(0));
    assert_eq!(app.state.follow.as_ref().unwrap().calls, 0);

    // A broken line is said, as an alert, and named in the follow.
    followed(
        &mut app,
        1,
        Update::Invalid("live.jsonl:9: not valid JSON".into()),
    );
    let status = app.state.status.as_ref().unwrap();
    assert!(status.alert && status.text == "live.jsonl:9: not valid JSON");
    assert!(
        app.state
            .follow
            .as_ref()
            .unwrap()
            .describe()
            .ends_with("0 call(s) · live.jsonl:9: not valid JSON")
    );
}

/// A followed call goes through the session's lens as `replay --host`
/// lenses a record: its recorded text and isError; the footer is read
/// from the text (a recording does not say where it is).
#[test]
fn a_followed_call_is_shown_through_the_sessions_lens() {
    let mut app = app();
    let opencode = fs_search_lens::resolve("opencode").unwrap();
    app.set_lens(Some(opencode));
    follow_live(&mut app);
    let mut page = "Found 3000 matches\n\na.rs\n".to_owned();
    for n in 1..=3000 {
        page.push_str(&format!("Line {n}: x\n"));
    }
    page.push_str("\n(Results are truncated. Full grep result stored at: /s/g.txt. Use Read.)");
    followed(
        &mut app,
        1,
        Update::Record(recorded("call-1-grep", &page, None)),
    );
    let expected = opencode.apply(
        &fs_search_lens::ToolResultInput {
            tool: "grep".into(),
            args: json!({"pattern": "call-1-grep"}),
            text: page.clone(),
            is_error: false,
            duration_secs: None,
        },
        &fs_search_lens::Knobs::default(),
    );
    assert_eq!(expected.cut, fs_search_lens::Cut::Head);
    let doc = content::tab_doc(&app.state, Tab::Text).unwrap();
    let verdict = &doc.lines[0].text;
    assert!(
        verdict.starts_with("opencode@current removes ")
            && verdict.ends_with("; footer lost; locator lost"),
        "{verdict}"
    );
    assert_eq!(content::lens::drawn_text(doc), expected.text);
    assert_eq!(
        doc.lines.iter().filter(|l| l.kind == LineKind::Cut).count(),
        1
    );
    // The lens set before the call stays; none again shows the page.
    app.set_lens(None);
    assert_eq!(doc_text(&app, Tab::Text), page);
}

/// Until the user picks a lens, a followed call a recording says an MCP
/// client made is shown through that client's host's lens (the era its
/// version falls in); a call with no client, as the tool returns it; a
/// lens the user picks (`L`, or none) wins over the client's.
#[test]
fn a_followed_call_is_shown_through_its_recorded_client_s_lens_until_one_is_chosen() {
    let mut app = app();
    follow_live(&mut app);
    let mut page = "Found 3000 matches\n\na.rs\n".to_owned();
    for n in 1..=3000 {
        page.push_str(&format!("Line {n}: x\n"));
    }
    followed(
        &mut app,
        1,
        Update::Record(recorded_from(
            "call-1-grep",
            &page,
            None,
            Some(("opencode", "1.0.0")),
        )),
    );
    let opencode = fs_search_lens::lens_for_client("opencode").unwrap();
    assert_eq!(
        app.state.shown_lens().map(|l| l.name()),
        Some(opencode.name())
    );
    let verdict = doc_text(&app, Tab::Text);
    assert!(
        verdict.starts_with(&format!("{} removes ", opencode.name())),
        "{verdict}"
    );
    // A call without a client: the page itself.
    followed(
        &mut app,
        1,
        Update::Record(recorded("call-2-grep", &page, None)),
    );
    assert!(app.state.shown_lens().is_none());
    assert_eq!(doc_text(&app, Tab::Text), page);
    // The user's choice, none included, holds for every call.
    app.set_lens(None);
    app.state.shown = Some(0);
    assert!(app.state.shown_lens().is_none());
    assert_eq!(doc_text(&app, Tab::Text), page);
}

#[test]
fn f_in_the_transcript_tab_follows_the_chosen_recording_and_f_again_stops() {
    let mut app = app();
    app.state.transcripts.files = vec![PathBuf::from("a.jsonl"), PathBuf::from("b.jsonl")];
    app.state.transcripts.selected = 0;
    let digit = char::from_digit(Tab::Transcript.digit() as u32, 10).unwrap();
    press(&mut app, KeyCode::Char(digit));
    press(&mut app, KeyCode::Down);
    assert_eq!(
        press(&mut app, KeyCode::Char('f')),
        vec![Effect::Follow {
            generation: 1,
            path: PathBuf::from("b.jsonl")
        }]
    );
    assert_eq!(app.state.tab, Tab::Text);
    press(&mut app, KeyCode::Char(digit));
    assert_eq!(
        press(&mut app, KeyCode::Char('f')),
        vec![Effect::StopFollowing]
    );
    assert!(app.state.follow.is_none());
    assert_eq!(app.state.tab, Tab::Transcript);
    // Outside the Transcript tab, f is not bound.
    press(&mut app, KeyCode::Char('1'));
    assert!(press(&mut app, KeyCode::Char('f')).is_empty());
    assert!(app.state.follow.is_none());
}

#[test]
fn the_tokenizer_loads_as_an_effect_and_a_failure_is_said_once() {
    let mut app = app();
    assert!(matches!(
        app.state.tokens.tokenizer,
        crate::interactive::state::tokens::TokenizerStatus::Off
    ));
    let effects = app.start_tokens(Some("/no/such/tokenizer.json".into()));
    assert_eq!(
        effects,
        vec![Effect::LoadTokenizer {
            file: Some("/no/such/tokenizer.json".into())
        }]
    );
    let more = app.on_event(AppEvent::TokenizerLoaded(Err(
        "cannot read tokenizer file /no/such/tokenizer.json: gone".into(),
    )));
    assert!(more.is_empty());
    let status = app.state.status.as_ref().unwrap();
    assert!(status.alert);
    assert!(
        status.text.contains("/no/such/tokenizer.json"),
        "{}",
        status.text
    );
    assert_eq!(app.state.tokens.page(1), None);
    assert_eq!(app.state.tokens.session_total(), 0);
}

// ---- why ----

fn explain_effect(effects: &[Effect]) -> (u64, ExplainCall, ExplainQuery) {
    match effects {
        [
            Effect::Explain {
                request,
                call,
                query,
            },
        ] => (*request, (**call).clone(), query.clone()),
        other => panic!("expected one Explain effect, got {other:?}"),
    }
}

#[test]
fn why_without_a_call_says_so_and_opens_nothing() {
    let mut app = app();
    assert!(press(&mut app, KeyCode::Char('w')).is_empty());
    assert!(app.state.explain.is_none());
    assert_eq!(app.state.editing, None);
    assert_eq!(app.state.status.as_ref().unwrap().text, "no call yet");
    assert!(press(&mut app, KeyCode::Char('u')).is_empty());
    assert!(app.state.explain.is_none());
}

#[test]
fn why_types_a_path_and_enter_explains_the_shown_call_as_it_ran() {
    let mut app = app();
    let result = glob_result(&["a.rs"], 10, None);
    let id = run_and_finish(&mut app, "**/*.rs", result.clone());
    app.state.tab = Tab::Config;
    assert!(press(&mut app, KeyCode::Char('w')).is_empty());
    assert_eq!(app.state.editing, Some(Editing::ExplainPath));
    assert_eq!(app.state.tab, Tab::Text, "the panel stands beside the page");
    // Keys type into the path, even those bound when browsing.
    type_text(&mut app, "src/q.rs  .env");
    assert_eq!(
        app.state.explain.as_ref().unwrap().input.value(),
        "src/q.rs  .env"
    );
    let (request, call, query) = explain_effect(&press(&mut app, KeyCode::Enter));
    assert_eq!(request, 1);
    assert_eq!(
        query,
        ExplainQuery::Paths(vec!["src/q.rs".into(), ".env".into()])
    );
    assert_eq!(call.tool, "glob");
    assert_eq!(call.args, json!({"pattern": "**/*.rs"}));
    assert_eq!(call.workdir, "/work/tree");
    assert_eq!(
        call.source,
        ExplainSource::Ran {
            config: json!({"sampleOverCapGlobResults": true}),
            result: Box::new(result)
        },
        "explained as it ran"
    );
    assert_eq!(app.state.editing, None);
    let panel = app.state.explain.as_ref().unwrap();
    assert_eq!(panel.target, ExplainTarget::Call(id));
    assert!(matches!(
        panel.status,
        ExplainStatus::Running { request: 1 }
    ));
}

#[test]
fn the_explanation_is_shown_and_a_stale_one_is_ignored() {
    let mut app = app();
    run_and_finish(&mut app, "*", glob_result(&["a.rs"], 10, None));
    press(&mut app, KeyCode::Char('w'));
    type_text(&mut app, "a.rs");
    explain_effect(&press(&mut app, KeyCode::Enter));
    // Asked again before the first answer: the first answer is stale.
    press(&mut app, KeyCode::Char('w'));
    let (request, _, _) = explain_effect(&press(&mut app, KeyCode::Enter));
    assert_eq!(request, 2);
    app.on_event(AppEvent::Explained {
        request: 1,
        outcome: Ok("a.rs: stale\n".into()),
    });
    let panel = app.state.explain.as_ref().unwrap();
    assert!(matches!(
        panel.status,
        ExplainStatus::Running { request: 2 }
    ));
    app.on_event(AppEvent::Explained {
        request: 2,
        outcome: Ok("a.rs: page\n  page lines: 3\n".into()),
    });
    let ExplainStatus::Done(doc) = &app.state.explain.as_ref().unwrap().status else {
        panic!("not done");
    };
    let lines: Vec<&str> = doc.lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(lines, ["a.rs: page", "  page lines: 3"]);
}

#[test]
fn a_failed_explanation_shows_why() {
    let mut app = app();
    run_and_finish(&mut app, "*", glob_result(&["a.rs"], 10, None));
    let (request, _, _) = explain_effect(&press(&mut app, KeyCode::Char('u')));
    app.on_event(AppEvent::Explained {
        request,
        outcome: Err("the call failed, so there is nothing to explain: x".into()),
    });
    assert!(matches!(
        &app.state.explain.as_ref().unwrap().status,
        ExplainStatus::Failed(e) if e == "the call failed, so there is nothing to explain: x"
    ));
}

#[test]
fn enter_with_no_path_typed_asks_for_one() {
    let mut app = app();
    run_and_finish(&mut app, "*", glob_result(&["a.rs"], 10, None));
    press(&mut app, KeyCode::Char('w'));
    type_text(&mut app, "   ");
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert_eq!(app.state.editing, Some(Editing::ExplainPath));
    assert_eq!(
        app.state.status.as_ref().unwrap().text,
        "type a path first (Tab completes it)"
    );
}

#[test]
fn u_lists_what_the_shown_call_did_not_search() {
    let mut app = app();
    run_and_finish(&mut app, "*", glob_result(&["a.rs"], 10, None));
    let (_, call, query) = explain_effect(&press(&mut app, KeyCode::Char('u')));
    assert_eq!(query, ExplainQuery::Unsearched);
    assert_eq!(call.args, json!({"pattern": "*"}));
    let panel = app.state.explain.as_ref().unwrap();
    assert_eq!(panel.query, Some(ExplainQuery::Unsearched));
    assert_eq!(app.state.editing, None, "u does not take the keyboard");
}

#[test]
fn tab_completes_the_path_from_the_workdir() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    std::fs::write(dir.path().join("src/log.rs"), "").unwrap();
    let session = SessionInfo {
        workdir: dir.path().to_string_lossy().into_owned(),
        ..SessionInfo::default()
    };
    let mut app = App::new(session, &json!({"sampleOverCapGlobResults": true}));
    run_and_finish(&mut app, "*", glob_result(&["a.rs"], 10, None));
    press(&mut app, KeyCode::Char('w'));
    type_text(&mut app, "s");
    assert!(press(&mut app, KeyCode::Tab).is_empty());
    assert_eq!(app.state.explain.as_ref().unwrap().input.value(), "src/");
    type_text(&mut app, "l");
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.state.explain.as_ref().unwrap().input.value(), "src/l");
    assert_eq!(app.state.status.as_ref().unwrap().text, "lib.rs  log.rs");
    type_text(&mut app, "i");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.state.explain.as_ref().unwrap().input.value(),
        "src/lib.rs"
    );
    assert_eq!(app.state.editing, Some(Editing::ExplainPath));
}

#[test]
fn esc_stops_typing_then_closes_the_panel_and_stops_its_explanation() {
    let mut app = app();
    run_and_finish(&mut app, "*", glob_result(&["a.rs"], 10, None));
    press(&mut app, KeyCode::Char('w'));
    assert!(press(&mut app, KeyCode::Esc).is_empty());
    assert_eq!(app.state.editing, None);
    assert!(app.state.explain.is_some());
    assert_eq!(press(&mut app, KeyCode::Esc), vec![Effect::StopExplaining]);
    assert!(app.state.explain.is_none());
    assert!(
        press(&mut app, KeyCode::Esc).is_empty(),
        "nothing left to close"
    );
}

/// Follows a recording at `dir/rec/live.jsonl` whose header names the
/// tree `work` (so `dir/rec/work`), with one grep record.
fn follow_one_recorded_grep(app: &mut App, dir: &std::path::Path) {
    app.follow(dir.join("rec/live.jsonl"));
    let header = fs_search_transcript::Header {
        contract: Default::default(),
        tree: "work".into(),
        config: json!({"sampleOverCapGlobResults": false}),
        env: fs_search_transcript::TranscriptEnv {
            rg: "ripgrep".into(),
            ripgrep_config: vec!["--sort=path".into()],
            executor: None,
        },
    };
    followed(app, 1, Update::Header(Box::new(header)));
    followed(
        app,
        1,
        Update::Record(recorded("call-1-grep", "No matches found", None)),
    );
}

#[test]
fn why_on_a_followed_call_reruns_it_in_the_live_workdir_the_recording_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("rec/work")).unwrap();
    let mut app = app();
    follow_one_recorded_grep(&mut app, dir.path());
    let (_, call, query) = explain_effect(&press(&mut app, KeyCode::Char('u')));
    assert_eq!(query, ExplainQuery::Unsearched);
    assert_eq!(call.tool, "grep");
    assert_eq!(call.args, json!({"pattern": "call-1-grep"}));
    let work = dir.path().join("rec/work").canonicalize().unwrap();
    assert_eq!(call.workdir, work.to_string_lossy());
    let ExplainSource::Recorded(source) = &call.source else {
        panic!("a recorded call is run again: {:?}", call.source);
    };
    assert_eq!(source.tree.root(), work, "the live workdir, in place");
    assert!(!source.tree.is_materialised());
    assert_eq!(
        source.recorded.header.config,
        json!({"sampleOverCapGlobResults": false})
    );
    assert_eq!(
        source.recorded.header.env.ripgrep_config,
        vec!["--sort=path".to_owned()]
    );
    assert_eq!(
        Value::Object(source.recorded.call.options.config.clone()),
        json!({"grepMaxMatches": 3})
    );
    // The record carries its tree: explainable after the follow ended,
    // and the tree is prepared once.
    app.state.follow = None;
    let (_, again, _) = explain_effect(&press(&mut app, KeyCode::Char('u')));
    let ExplainSource::Recorded(again) = &again.source else {
        panic!("{:?}", again.source);
    };
    assert!(Arc::ptr_eq(&again.tree, &source.tree));
}

#[test]
fn why_on_a_followed_call_whose_tree_is_gone_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    follow_one_recorded_grep(&mut app, dir.path());
    assert!(press(&mut app, KeyCode::Char('u')).is_empty());
    let work = dir.path().join("rec/work");
    assert_eq!(
        app.state.status.as_ref().unwrap().text,
        format!(
            "the recording's tree {} does not exist: there is nothing to run the call again in",
            work.display()
        )
    );
    assert!(app.state.explain.is_none());
}

#[test]
fn shift_j_and_k_page_the_explanation_within_its_length() {
    let mut app = app();
    run_and_finish(&mut app, "*", glob_result(&["a.rs"], 10, None));
    let (request, _, _) = explain_effect(&press(&mut app, KeyCode::Char('u')));
    let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    app.on_event(AppEvent::Explained {
        request,
        outcome: Ok(text),
    });
    let page = usize::from(app.state.viewports.pane.rows) - 1;
    press(&mut app, KeyCode::Char('J'));
    assert_eq!(app.state.explain.as_ref().unwrap().scroll, page);
    for _ in 0..5 {
        press(&mut app, KeyCode::Char('J'));
    }
    assert_eq!(
        app.state.explain.as_ref().unwrap().scroll,
        29,
        "the last line"
    );
    press(&mut app, KeyCode::Char('K'));
    assert_eq!(app.state.explain.as_ref().unwrap().scroll, 29 - page);
    assert_eq!(
        app.state.shown,
        Some(0),
        "the page's own keys are untouched"
    );
}

#[test]
fn why_on_another_call_replaces_the_panel_and_stops_its_running_explanation() {
    let mut app = app();
    run_and_finish(&mut app, "*", glob_result(&["a.rs"], 10, None));
    let second = run_and_finish(&mut app, "*.rs", glob_result(&["a.rs"], 10, None));
    let (request, _, _) = explain_effect(&press(&mut app, KeyCode::Char('u')));
    press(&mut app, KeyCode::Char('['));
    assert_eq!(
        app.state.explain.as_ref().unwrap().target,
        ExplainTarget::Call(second),
        "kept"
    );
    assert_eq!(
        press(&mut app, KeyCode::Char('w')),
        vec![Effect::StopExplaining]
    );
    let panel = app.state.explain.as_ref().unwrap();
    assert_eq!(panel.target, ExplainTarget::Call(1));
    assert!(matches!(panel.status, ExplainStatus::Typing));
    // The stopped explanation's answer, should it arrive, is ignored.
    app.on_event(AppEvent::Explained {
        request,
        outcome: Ok("late\n".into()),
    });
    assert!(matches!(
        app.state.explain.as_ref().unwrap().status,
        ExplainStatus::Typing
    ));
    // The same call's panel is reopened as it was: nothing to stop.
    press(&mut app, KeyCode::Esc);
    assert!(press(&mut app, KeyCode::Char('w')).is_empty());
}

/// The Transcript tab's ablate mode, driven by keys and by
/// the outcomes its effect reports.
mod ablate_mode {
    use std::collections::HashMap;
    use std::sync::{Arc, LazyLock};

    use serde_json::Map;

    use super::*;
    use crate::interactive::state::ablate::{AblateDone, AblatePhase, AblateStop, ChangedPage};
    use crate::interactive::state::tokens::TokenizerStatus;
    use fs_search_process::SharedTokenizer;
    use fs_search_transcript::AblateProgress;
    use fs_search_transcript::Outcome;
    use fs_search_transcript::{PageFacts, PageStat, SurfaceStat, VariantStats};

    static TOKENIZER: LazyLock<SharedTokenizer> = LazyLock::new(|| {
        SharedTokenizer(Arc::new(fs_search_tokens::Tokenizer::embedded().unwrap()))
    });

    /// An app on the Transcript tab with `a.jsonl` chosen and the
    /// tokenizer ready.
    fn transcript_app() -> App {
        let mut app = app();
        app.state.transcripts.files = vec![PathBuf::from("a.jsonl")];
        app.state.transcripts.selected = 0;
        app.state.tab = Tab::Transcript;
        app.state.tokens.tokenizer = TokenizerStatus::Ready(TOKENIZER.clone());
        app
    }

    fn clear_input(app: &mut App) {
        for _ in 0..80 {
            press(app, KeyCode::Backspace);
        }
    }

    /// Presses a, types `values`, presses Enter: the effects.
    fn ablate(app: &mut App, values: &str) -> Vec<Effect> {
        assert!(press(app, KeyCode::Char('a')).is_empty());
        clear_input(app);
        type_text(app, values);
        press(app, KeyCode::Enter)
    }

    fn generation_of(effects: &[Effect]) -> u64 {
        match effects {
            [Effect::Ablate { generation, .. }] => *generation,
            other => panic!("expected one Ablate effect, got {other:?}"),
        }
    }

    fn outcome(text: &str) -> Outcome {
        Outcome {
            is_error: false,
            error: None,
            spill: None,
            warnings: Vec::new(),
            text: text.to_owned(),
            tokens: None,
        }
    }

    fn variant(set: Option<u64>, tokens: &[u64], changed: &[bool]) -> VariantStats {
        let overrides: Map<String, Value> = set
            .map(|n| {
                [("grepMaxMatches".to_owned(), json!(n))]
                    .into_iter()
                    .collect()
            })
            .unwrap_or_default();
        let surface = SurfaceStat {
            tokens: 10,
            kv_prefix: fs_search_tokens::PrefixComparison {
                identical: true,
                common_tokens: 10,
                tokens_a: 10,
                tokens_b: 10,
                first_difference: None,
            },
        };
        let mut stats = VariantStats::new(overrides, json!({}), surface);
        for (i, (t, c)) in tokens.iter().zip(changed).enumerate() {
            let page = PageStat {
                file: "a.jsonl".into(),
                record: format!("call-{i}"),
                tokens: *t,
                changed: *c,
                hidden: 0,
                coverage: None,
            };
            stats.add(page, PageFacts::default());
        }
        stats.finish();
        stats
    }

    /// A result: the baseline and grepMaxMatches=1 (whose second call
    /// changed) and =2 (nothing changed).
    fn done() -> Box<AblateDone> {
        let changed = ChangedPage {
            record: 1,
            name: "call-1".into(),
            baseline: outcome("Found 2 matches\na.txt\n  Line 1: one\nb.txt\n  Line 1: two"),
            page: outcome("Found 1 of 2 matches\na.txt\n  Line 1: one"),
        };
        Box::new(AblateDone {
            variants: vec![
                variant(None, &[5, 30], &[false, false]),
                variant(Some(1), &[5, 20], &[false, true]),
                variant(Some(2), &[5, 30], &[false, false]),
            ],
            changed: HashMap::from([(1, vec![changed])]),
        })
    }

    #[test]
    fn a_asks_for_the_values_and_enter_starts_the_ablation_as_an_effect() {
        let mut app = transcript_app();
        let effects = ablate(&mut app, "grepMaxMatches=1,2 globMaxResults=5");
        let [Effect::Ablate { file, variants, .. }] = effects.as_slice() else {
            panic!("{effects:?}");
        };
        assert_eq!(file, &PathBuf::from("a.jsonl"));
        assert_eq!(
            variants,
            &vec![
                json!({"grepMaxMatches": 1, "globMaxResults": 5})
                    .as_object()
                    .unwrap()
                    .clone(),
                json!({"grepMaxMatches": 2, "globMaxResults": 5})
                    .as_object()
                    .unwrap()
                    .clone(),
            ]
        );
        assert_eq!(app.state.editing, None);
        let phase = &app.state.ablate.as_ref().unwrap().phase;
        assert!(
            matches!(phase, AblatePhase::Running { progress: None, .. }),
            "{phase:?}"
        );
    }

    /// The `--set` values of an Ablate effect, one label per variant.
    fn variants_of(effects: &[Effect]) -> Vec<String> {
        match effects {
            [Effect::Ablate { variants, .. }] => variants
                .iter()
                .map(fs_search_transcript::variant_label)
                .collect(),
            other => panic!("expected one Ablate effect, got {other:?}"),
        }
    }

    #[test]
    fn the_ablate_prompt_opens_empty_and_enter_runs_the_suggestion() {
        let mut app = transcript_app();
        assert!(press(&mut app, KeyCode::Char('a')).is_empty());
        let phase = &app.state.ablate.as_ref().unwrap().phase;
        let AblatePhase::Asking(input) = phase else {
            panic!("{phase:?}");
        };
        assert_eq!(input.value(), "");
        let effects = press(&mut app, KeyCode::Enter);
        assert_eq!(
            variants_of(&effects),
            [
                "grepMaxMatches=50",
                "grepMaxMatches=100",
                "grepMaxMatches=250"
            ]
        );
    }

    #[test]
    fn typing_in_the_ablate_prompt_replaces_the_suggestion() {
        let mut app = transcript_app();
        assert!(press(&mut app, KeyCode::Char('a')).is_empty());
        type_text(&mut app, "globMaxResults=5");
        assert_eq!(
            variants_of(&press(&mut app, KeyCode::Enter)),
            ["globMaxResults=5"]
        );
    }

    #[test]
    fn a_bad_set_value_is_said_and_the_input_stays_open() {
        let mut app = transcript_app();
        assert!(ablate(&mut app, "grepMax=1").is_empty());
        let status = app.state.status.clone().unwrap();
        assert!(status.alert);
        assert!(
            status.text.starts_with("--set grepMax: not a config key"),
            "{}",
            status.text
        );
        assert_eq!(app.state.editing, Some(Editing::Ablate));
        // Esc leaves the input and the ablate mode.
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.state.editing, None);
        assert!(app.state.ablate.is_none());
    }

    #[test]
    fn without_a_ready_tokenizer_the_ablation_is_refused_with_the_reason() {
        let mut app = transcript_app();
        app.state.tokens.tokenizer = TokenizerStatus::Loading;
        assert!(ablate(&mut app, "grepMaxMatches=1").is_empty());
        let status = app.state.status.clone().unwrap();
        assert!(
            status.text.contains("tokenizer is not ready"),
            "{}",
            status.text
        );
    }

    #[test]
    fn progress_is_shown_and_esc_cancels_a_running_ablation() {
        let mut app = transcript_app();
        let generation = generation_of(&ablate(&mut app, "grepMaxMatches=1"));
        let progress = AblateProgress { done: 3, total: 8 };
        app.on_event(AppEvent::AblateProgress {
            generation,
            progress,
        });
        let phase = &app.state.ablate.as_ref().unwrap().phase;
        assert!(matches!(phase, AblatePhase::Running { progress: Some(p), .. } if *p == progress));
        assert_eq!(press(&mut app, KeyCode::Esc), vec![Effect::CancelAblation]);
        app.on_event(AppEvent::Ablated {
            generation,
            outcome: Err(AblateStop::Cancelled),
        });
        let phase = &app.state.ablate.as_ref().unwrap().phase;
        assert!(
            matches!(phase, AblatePhase::Stopped(AblateStop::Cancelled)),
            "{phase:?}"
        );
        assert_eq!(
            app.state.status.clone().unwrap().text,
            "the ablation was cancelled"
        );
        // Esc once nothing runs asks for nothing; b goes back to the list.
        assert!(press(&mut app, KeyCode::Esc).is_empty());
        assert!(press(&mut app, KeyCode::Char('b')).is_empty());
        assert!(app.state.ablate.is_none());
    }

    #[test]
    fn quitting_during_an_ablation_cancels_it() {
        let mut app = transcript_app();
        ablate(&mut app, "grepMaxMatches=1");
        assert_eq!(
            press(&mut app, KeyCode::Char('q')),
            vec![Effect::CancelAblation]
        );
        assert!(app.state.should_quit);
    }

    #[test]
    fn leaving_a_running_ablation_cancels_it_and_ignores_its_outcome() {
        let mut app = transcript_app();
        let generation = generation_of(&ablate(&mut app, "grepMaxMatches=1"));
        assert_eq!(
            press(&mut app, KeyCode::Char('b')),
            vec![Effect::CancelAblation]
        );
        assert!(app.state.ablate.is_none());
        app.on_event(AppEvent::Ablated {
            generation,
            outcome: Ok(done()),
        });
        assert!(app.state.ablate.is_none());
        // A later run ignores the earlier run's reports.
        let later = generation_of(&ablate(&mut app, "grepMaxMatches=1"));
        assert_ne!(later, generation);
        app.on_event(AppEvent::Ablated {
            generation,
            outcome: Ok(done()),
        });
        let phase = &app.state.ablate.as_ref().unwrap().phase;
        assert!(matches!(phase, AblatePhase::Running { .. }), "{phase:?}");
    }

    #[test]
    fn the_result_selects_variants_and_opens_a_changed_call_against_the_baseline() {
        let mut app = transcript_app();
        let generation = generation_of(&ablate(&mut app, "grepMaxMatches=1,2"));
        app.on_event(AppEvent::Ablated {
            generation,
            outcome: Ok(done()),
        });
        let selected = |app: &App| match &app.state.ablate.as_ref().unwrap().phase {
            AblatePhase::Done { variant, diff, .. } => (*variant, diff.is_some()),
            other => panic!("{other:?}"),
        };
        // The first variant is selected, with its changed call.
        assert_eq!(selected(&app), (1, false));
        assert_eq!(app.state.ablate.as_ref().unwrap().changed_calls().len(), 1);
        press(&mut app, KeyCode::Down);
        assert_eq!(selected(&app), (2, false));
        assert!(
            app.state
                .ablate
                .as_ref()
                .unwrap()
                .changed_calls()
                .is_empty()
        );
        // Enter with no changed call opens nothing.
        press(&mut app, KeyCode::Enter);
        assert_eq!(selected(&app), (2, false));
        press(&mut app, KeyCode::Up);
        press(&mut app, KeyCode::Enter);
        assert_eq!(selected(&app), (1, true));
        let AblatePhase::Done {
            diff: Some(diff), ..
        } = &app.state.ablate.as_ref().unwrap().phase
        else {
            unreachable!()
        };
        assert!(diff.rows.iter().any(|r| {
            r.recorded.changed
                && r.recorded
                    .text
                    .as_deref()
                    .is_some_and(|t| t.contains("two"))
        }));
        // b closes the diff, then leaves the ablate mode.
        press(&mut app, KeyCode::Char('b'));
        assert_eq!(selected(&app), (1, false));
        press(&mut app, KeyCode::Char('b'));
        assert!(app.state.ablate.is_none());
    }
}

#[test]
fn the_call_tab_names_the_host_a_remote_command_ran_on() {
    let mut app = app();
    press(&mut app, KeyCode::Char('e'));
    ctrl(&mut app, 'u');
    type_text(&mut app, "*.rs");
    let (id, _, _) = run_effect(&press(&mut app, KeyCode::Enter));
    press(&mut app, KeyCode::Esc);
    app.on_event(AppEvent::Finished {
        id,
        result: Box::new(glob_result(&["a.rs"], 100, None)),
        duration: Duration::from_millis(12),
        commands: vec![crate::interactive::command_tap::RanCommand {
            command: "rg --files --glob='*.rs'".into(),
            workdir: "/srv/work".into(),
            host: Some("ssh://devbox".into()),
        }],
    });
    let details: Vec<String> = content::tab_doc(&app.state, Tab::Call)
        .unwrap()
        .lines
        .iter()
        .map(|l| l.text.clone())
        .collect();
    assert!(
        details
            .iter()
            .any(|l| l == "            run by bash -c in /srv/work on ssh://devbox"),
        "{details:?}"
    );
}
