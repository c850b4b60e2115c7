//! Whole screens on ratatui's `TestBackend`, pinned with insta: the app is
//! driven by keys, its effects carried out by the real effect runner
//! (real bash, real rg, real spill store) on a small temp tree with pinned
//! mtimes, and each frame drawn as the loop draws it
//! (`event_loop::draw`). Durations are pinned when results arrive; the
//! temp dir's random name and the spill file's random prefix are
//! redacted. The Transcript tab's flows (record, save, replay) are here
//! too.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use fs_search_engine::RG_MISSING_WARNING;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::app::App;
use super::effects::{AppEvent, Effect, EffectRunner, LoadInfo};
use super::event_loop;
use super::state::session::SessionInfo;

/// The fixed session id: its spill directory name is deterministic.
const SESSION: &str = "session-snapshots";
/// Every call's pinned duration.
const DURATION: Duration = Duration::from_micros(4_200);

/// A temp tree `/tmp/fswb-XXXXXX/tree` (fixed-length path, so wrapping
/// never depends on the machine) with every file's mtime pinned.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    /// `files`: (path, content), oldest first.
    fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("fswb-")
            .rand_bytes(6)
            .tempdir_in("/tmp")
            .unwrap();
        let root = dir.path().to_path_buf();
        let tree = root.join("tree");
        let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        for (i, (path, content)) in files.iter().enumerate() {
            let path = tree.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, content).unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(base + Duration::from_secs(60 * i as u64))
                .unwrap();
        }
        Self { _dir: dir, root }
    }

    fn tree(&self) -> PathBuf {
        self.root.join("tree")
    }
}

/// The app, the real effect runner and a test terminal.
struct Harness {
    fixture: Fixture,
    app: App,
    runner: EffectRunner,
    events: mpsc::UnboundedReceiver<AppEvent>,
    terminal: Terminal<TestBackend>,
}

impl Harness {
    async fn new(files: &[(&str, &str)], config: Value, cols: u16, rows: u16) -> Self {
        let fixture = Fixture::new(files);
        let spill_root = fixture.root.join("s");
        let session = SessionInfo {
            workdir: fixture.tree().display().to_string(),
            session_id: SESSION.into(),
            spill_root: Some(spill_root.clone()),
            recordings_dir: fixture.root.join("recordings"),
            log_path: Some(fixture.root.join("state/workbench.log")),
            rg: fs_search_process::RgInfo::detect(),
            executor: None,
            contract: Default::default(),
        };
        let (tx, events) = mpsc::unbounded_channel();
        let runner = EffectRunner::new(fixture.tree(), Some(spill_root), SESSION.into(), tx);
        let app = App::new(session, &config);
        let terminal = Terminal::new(TestBackend::new(cols, rows)).unwrap();
        let mut harness = Self {
            fixture,
            app,
            runner,
            events,
            terminal,
        };
        let effects = harness.app.start();
        harness.carry_out(effects).await;
        harness
    }

    /// Hands effects to the runner and feeds back what they produce.
    async fn carry_out(&mut self, effects: Vec<Effect>) {
        let awaits = |effects: &[Effect]| {
            effects
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        Effect::Load { .. }
                            | Effect::Run { .. }
                            | Effect::CountSpill { .. }
                            | Effect::Explain { .. }
                    )
                })
                .count()
        };
        let mut awaited = awaits(&effects);
        self.runner.apply_all(effects);
        while awaited > 0 {
            awaited -= 1;
            let event = tokio::time::timeout(Duration::from_secs(30), self.events.recv())
                .await
                .expect("the runner answers")
                .expect("the channel is open");
            let event = match event {
                AppEvent::Finished {
                    id,
                    result,
                    commands,
                    ..
                } => {
                    self.runner.finished();
                    AppEvent::Finished {
                        id,
                        result,
                        duration: DURATION,
                        commands,
                    }
                }
                other => other,
            };
            // Only a counted call asks for more: its spill's count.
            let more = self.app.on_event(event);
            assert!(
                more.iter().all(|e| matches!(e, Effect::CountSpill { .. })),
                "{more:?}"
            );
            awaited += awaits(&more);
            self.runner.apply_all(more);
        }
    }

    async fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        let effects = self.app.handle_key(&KeyEvent::new(code, modifiers));
        self.carry_out(effects).await;
    }

    /// Presses keys: `<Enter>`-style names for special keys, else chars.
    async fn keys(&mut self, keys: &str) {
        let mut rest = keys;
        while let Some(c) = rest.chars().next() {
            let special = rest
                .strip_prefix('<')
                .and_then(|r| r.find('>').map(|end| (&r[..end], &r[end + 1..])));
            if let Some((name, after)) = special {
                rest = after;
                let (code, mods) = match name {
                    "Enter" => (KeyCode::Enter, KeyModifiers::NONE),
                    "Esc" => (KeyCode::Esc, KeyModifiers::NONE),
                    "Tab" => (KeyCode::Tab, KeyModifiers::NONE),
                    "Down" => (KeyCode::Down, KeyModifiers::NONE),
                    "End" => (KeyCode::End, KeyModifiers::NONE),
                    "C-u" => (KeyCode::Char('u'), KeyModifiers::CONTROL),
                    "C-t" => (KeyCode::Char('t'), KeyModifiers::CONTROL),
                    other => panic!("unknown key <{other}>"),
                };
                self.key(code, mods).await;
                continue;
            }
            self.key(KeyCode::Char(c), KeyModifiers::NONE).await;
            rest = &rest[c.len_utf8()..];
        }
    }

    /// Follows the recording at `path` until `calls` calls were read.
    async fn follow_until(&mut self, path: PathBuf, calls: usize) {
        let effects = self.app.follow(path);
        self.runner.apply_all(effects);
        while self.app.state.follow.as_ref().map_or(0, |f| f.calls) < calls {
            let event = tokio::time::timeout(Duration::from_secs(30), self.events.recv())
                .await
                .expect("the follow reports")
                .expect("the channel is open");
            assert!(self.app.on_event(event).is_empty());
        }
    }

    /// The screen as text, one line per row, trailing spaces trimmed.
    fn screen(&mut self) -> String {
        let now = self
            .app
            .state
            .running
            .as_ref()
            .map_or_else(Instant::now, |r| r.started + Duration::from_millis(1300));
        event_loop::draw(&mut self.terminal, &mut self.app, now).unwrap();
        buffer_text(self.terminal.backend().buffer())
    }
}

fn buffer_text(buffer: &ratatui::buffer::Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        for x in 0..area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The filters every screen snapshot applies: temp paths, random locator
/// parts and the rg version in the header redacted (its digits have the
/// same width under every supported rg, so the layout does not change).
fn screen_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"fswb-[A-Za-z0-9_]{6}", "fswb-RANDOM"),
        (
            r"[0-9a-f]+-(glob|grep)-results\.txt",
            "[RANDOM]-$1-results.txt",
        ),
        // A page's tokens count its random temp paths too.
        (r"[0-9][0-9,]* tokens (of|\(full result)", "[N] tokens $1"),
        (r"· rg [0-9]+\.[0-9]+\.[0-9]+", "· rg N.N.N"),
    ]
}

/// Snapshots a screen with temp paths and random locator parts redacted.
macro_rules! assert_screen {
    ($name:expr, $screen:expr) => {
        insta::with_settings!({
            filters => screen_filters(),
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!($name, $screen);
        });
    };
}

/// Snapshots a screen that shows text rg writes itself (its stderr, glob's
/// file order): one snapshot per rg major version (`NAME@rg13.snap`).
macro_rules! assert_rg_screen {
    ($name:expr, $screen:expr) => {
        let major = fs_search_process::RgInfo::detect()
            .major()
            .expect("the screen tests need rg on PATH");
        insta::with_settings!({
            filters => screen_filters(),
            prepend_module_to_snapshot => false,
            snapshot_suffix => format!("rg{major}"),
        }, {
            insta::assert_snapshot!($name, $screen);
        });
    };
}

fn sampling(on: bool) -> Value {
    json!({ "sampleOverCapGlobResults": on })
}

/// A tree of a few top-level entries, oldest first.
const TREE: &[(&str, &str)] = &[
    ("vendor/a.ts", "export const a = 1;\n"),
    ("vendor/b.ts", "export const b = 2;\n"),
    ("vendor/c.ts", "export const c = 3;\n"),
    ("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
    ("src/lib.rs", "pub fn lib() {}\n"),
    ("guide/intro.md", "# Intro\n"),
    ("README.md", "# Tree\n"),
];

#[tokio::test]
async fn the_header_names_the_version_of_the_rg_the_calls_run() {
    let mut h = Harness::new(TREE, sampling(true), 100, 24).await;
    let rg = fs_search_process::RgInfo::detect();
    let version = rg.version.expect("the screen tests need rg on PATH");
    let screen = h.screen();
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains(&format!("plugin loaded, sampling on · rg {version}")),
        "{header}"
    );
}

#[tokio::test]
async fn the_header_names_an_executor_other_than_the_local_one_before_the_rg_version() {
    let mut h = Harness::new(TREE, sampling(true), 120, 24).await;
    let version = fs_search_process::RgInfo::detect()
        .version
        .expect("the screen tests need rg on PATH");
    h.app.state.session.executor = Some("ssh://devbox".to_owned());
    let screen = h.screen();
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains(&format!("sampling on · ssh://devbox · rg {version}")),
        "{header}"
    );
}

#[tokio::test]
async fn the_header_names_rc8_and_the_rg_binary_that_rg_chose() {
    let mut h = Harness::new(TREE, sampling(true), 160, 24).await;
    let rg = fs_search_process::RgInfo::detect();
    let path = rg.path.clone().expect("the screen tests need rg on PATH");
    let version = rg
        .version
        .clone()
        .expect("the screen tests need rg on PATH");
    h.app.state.session.contract = fs_search_process::ContractChoice {
        release: fs_search_engine::release::Release::Rc8,
        rg: Some(path.clone()),
    };
    let screen = h.screen();
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains(&format!(
            "sampling on · contract 0.1.0-rc.8 · rg {version} ({})",
            path.display()
        )),
        "{header}"
    );
}

#[tokio::test]
async fn empty_start() {
    let mut h = Harness::new(TREE, sampling(true), 80, 24).await;
    assert_screen!("empty_start", h.screen());
}

#[tokio::test]
async fn glob_within_cap() {
    let mut h = Harness::new(TREE, sampling(true), 100, 30).await;
    h.keys("e*.ts<Enter><Esc>").await;
    let screen = h.screen();
    assert!(screen.contains("vendor/c.ts"), "{screen}");
    assert_screen!("glob_within_cap", screen);
}

#[tokio::test]
async fn sampled_over_cap_glob_with_spill() {
    let config = json!({"sampleOverCapGlobResults": true, "globMaxResults": 3});
    let mut h = Harness::new(TREE, config, 100, 30).await;
    h.keys("e*<Enter><Esc>").await;
    let record = h.app.state.shown_record().unwrap();
    let spill = record.ran().unwrap().spill.clone().expect("a spill");
    assert!(record.text().ends_with(&format!(
        "Full sorted result stored at: {}. {})",
        spill.locator, spill.retrieval_hint
    )));
    assert!(Path::new(&spill.locator).starts_with(h.fixture.root.join("s")));
    assert_rg_screen!("sampled_over_cap_glob_with_spill", h.screen());
    // the spill file opens over the panes
    let effects = h.app.handle_key(&KeyEvent::from(KeyCode::Char('o')));
    let [Effect::ReadSpill { id, path }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    let outcome = super::effects::read_spill(path).await;
    h.app.on_event(AppEvent::SpillRead { id: *id, outcome });
    assert_rg_screen!("spill_file_open", h.screen());
}

/// The Meta tab of a sampled over-cap glob page: the card, then the
/// page's coverage of the tree; a page within the cap has none.
#[tokio::test]
async fn the_meta_tab_shows_the_coverage_of_an_over_cap_glob_page() {
    let config = json!({"sampleOverCapGlobResults": true, "globMaxResults": 3});
    let mut h = Harness::new(TREE, config, 100, 30).await;
    let meta_lines = |h: &Harness| -> Vec<String> {
        let record = h.app.state.shown_record().unwrap();
        let doc = super::content::record_doc(record, super::tabs::Tab::Meta, "s").unwrap();
        doc.lines.iter().map(|l| l.text.clone()).collect()
    };
    h.keys("e*<Enter><Esc>").await;
    let lines = meta_lines(&h);
    assert!(
        lines.contains(&"Coverage of the page (3 of 7 paths; not shown to the model)".to_owned()),
        "{lines:?}"
    );
    // Three top-level directories hold matches; how many the page
    // reaches depends on rg's file order (rg 13 sorts per directory, 14
    // and 15 globally): the line counts the page's own directories.
    let page = &h.app.state.shown_record().unwrap().text();
    let reached: std::collections::BTreeSet<&str> = page
        .lines()
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once('/').map(|(top, _)| top))
        .collect();
    let percent = (reached.len() * 100 + 1) / 3;
    assert!(
        lines.iter().any(|l| l.starts_with(&format!(
            "depth 1     {} of 3 directories ({percent} %)",
            reached.len()
        ))),
        "{page}\n{lines:?}"
    );
    h.keys("e<C-u>*.md<Enter><Esc>").await;
    let lines = meta_lines(&h);
    assert!(
        !lines.iter().any(|l| l.starts_with("Coverage")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn grep_with_truncated_lines() {
    let long = format!("let needle = \"{}\";\n", "x".repeat(120));
    let files = [("data/long.txt", long.as_str())];
    let config = json!({"sampleOverCapGlobResults": false, "grepMaxLineBytes": 40});
    let mut h = Harness::new(&files, config, 100, 30).await;
    h.keys("te<C-u>needle<Enter><Esc>").await;
    let text = &h.app.state.shown_record().unwrap().text();
    assert!(text.contains(" (line truncated)"), "{text}");
    assert_screen!("grep_with_truncated_lines", h.screen());
}

/// A call another process recorded (as `workbench mcp --record` writes
/// it), followed: the result tabs show what the recording keeps.
#[tokio::test]
async fn followed_recording_call() {
    use fs_search_transcript::{
        Call, CallOptions, Header, Outcome, OutcomeSpill, SessionOption, SpillMode, TranscriptEnv,
        call_line, header_line, outcome_lines,
    };
    let mut h = Harness::new(TREE, sampling(true), 100, 30).await;
    let call = Call {
        name: "call-1-grep".into(),
        tool: "grep".into(),
        args: json!({"pattern": "fn", "path": "src"}),
        options: CallOptions {
            spill: SpillMode::Store,
            session: Some(SessionOption {
                id: Some("session-mcp".into()),
                cwd: Some(".".into()),
            }),
            ..CallOptions::default()
        },
    };
    let outcome = Outcome {
        is_error: false,
        error: None,
        spill: Some(OutcomeSpill {
            locator: "<SPILL>/session-mcp/<RAND>-grep-results.txt".into(),
            bytes: 61,
        }),
        warnings: Vec::new(),
        text: "Found 1 of 2 matches\n\nsrc/main.rs\nLine 1: fn main() {\n\n(Showing 1 of 2 matches. Full grep result stored at: <SPILL>/session-mcp/<RAND>-grep-results.txt.)".into(),
        tokens: None,
    };
    let header = Header {
        contract: Default::default(),
        tree: "tree".into(),
        config: sampling(true),
        env: TranscriptEnv {
            rg: "ripgrep 14.1.0".into(),
            ripgrep_config: Vec::new(),
            executor: None,
        },
    };
    let path = h.fixture.root.join("live.jsonl");
    let mut lines = header_line(&header);
    lines.push_str(&call_line(&call));
    lines.push_str(&outcome_lines(&call.name, &outcome));
    std::fs::write(&path, lines).unwrap();
    h.follow_until(path, 1).await;
    let screen = h.screen();
    assert!(screen.contains("◉ FOLLOW 1"), "{screen}");
    assert_screen!("followed_recording_call", screen);
    h.keys("2").await;
    let value = h.screen();
    assert!(
        value.contains("not in the recording — the canonical value"),
        "{value}"
    );
    h.keys("4").await;
    assert_screen!("followed_recording_call_details", h.screen());
}

/// The Call tab shows the command line bash ran for the call, quoted
/// as the engine quoted it, and the directory it ran in.
#[tokio::test]
async fn the_call_tab_shows_the_exact_command_bash_ran() {
    let mut h = Harness::new(TREE, sampling(true), 120, 30).await;
    h.keys("te<C-u>it's<Tab>src<Tab>*.rs<Enter>4").await;
    let screen = h.screen();
    assert!(
        screen.contains("│  command     rg --json --regexp='it'\\''s' --glob='*.rs' -- 'src'   "),
        "{screen}"
    );
    let tree = h.fixture.tree();
    assert!(
        screen.contains(&format!("run by bash -c in {}", tree.display())),
        "{screen}"
    );
    // What the arguments alone cannot give: an engine-side refusal runs
    // nothing.
    h.keys("A<C-u>{}<Enter>4").await;
    let screen = h.screen();
    assert!(
        screen.contains("command     none: the call ended before bash ran rg"),
        "{screen}"
    );
}

#[tokio::test]
async fn error_result_with_metadata() {
    let mut h = Harness::new(TREE, sampling(true), 100, 30).await;
    h.keys("te(<Enter><Esc>").await;
    let result = &h.app.state.shown_record().unwrap().ran().unwrap();
    assert!(result.is_error);
    assert_eq!(
        result.code().map(|c| c.code()),
        Some("SEARCH_INVALID_PATTERN")
    );
    assert_rg_screen!("error_result_text", h.screen());
    h.keys("4").await;
    assert_rg_screen!("error_result_call_details", h.screen());
}

/// The embedded tokenizer, loaded once for the token tests (set into the
/// state directly: the screens do not depend on load timing).
fn tokenizer() -> fs_search_process::SharedTokenizer {
    static TOKENIZER: std::sync::OnceLock<fs_search_process::SharedTokenizer> =
        std::sync::OnceLock::new();
    TOKENIZER
        .get_or_init(|| {
            fs_search_process::SharedTokenizer(std::sync::Arc::new(
                fs_search_tokens::Tokenizer::embedded().unwrap(),
            ))
        })
        .clone()
}

#[tokio::test]
async fn token_counts_in_the_summary_surface_config_and_history() {
    let config = json!({"sampleOverCapGlobResults": true, "globMaxResults": 3});
    let mut h = Harness::new(TREE, config, 100, 30).await;
    let shared = tokenizer();
    let effects = h.app.set_tokenizer(shared.clone());
    h.carry_out(effects).await;
    h.keys("e*<Enter><Esc>").await;
    let record = h.app.state.shown_record().unwrap();
    let spill = record.ran().unwrap().spill.clone().expect("a spill");
    let page = h.app.state.tokens.page(record.id).unwrap();
    assert_eq!(page.text, shared.0.count(record.text()));
    let full = std::fs::read_to_string(&spill.locator).unwrap();
    assert_eq!(page.full, Some(shared.0.count(&full)));
    let screen = h.screen();
    // This spill is small: the page, with its footer, has more tokens.
    assert!(page.text > shared.0.count(&full));
    assert!(
        screen.contains(&format!(
            "{} tokens (full result {})",
            page.text,
            shared.0.count(&full)
        )),
        "{screen}"
    );
    assert_rg_screen!("tokens_summary", screen);

    h.keys("5").await;
    let surface = h.app.state.tokens.surface.clone().unwrap();
    assert_eq!(surface.sections.len(), 2);
    assert_eq!(surface.tools.len(), 2);
    let screen = h.screen();
    assert!(
        screen.contains(&format!("{} tokens per request", surface.total())),
        "{screen}"
    );
    assert_rg_screen!("tokens_surface", screen);

    // Turning sampling off changes the glob section first.
    h.keys("6 ").await;
    let change = h.app.state.tokens.change.clone().unwrap();
    assert!(
        change.starts_with(
            "this change invalidates the cached prefix from section tool:glob (token "
        ),
        "{change}"
    );
    assert!(
        change.ends_with(&format!(" of {})", surface.total())),
        "{change}"
    );
    assert_screen!("tokens_config_change", h.screen());
    // The same config again keeps the prefix.
    h.keys("a").await;
    assert_eq!(
        h.app.state.tokens.change.as_deref(),
        Some("prefix unchanged: the cached prefix stays valid")
    );

    h.keys("7").await;
    let screen = h.screen();
    assert!(
        screen.contains(&format!(
            "1 call(s) · {} tokens added to the context",
            page.text
        )),
        "{screen}"
    );
}

#[tokio::test]
async fn surface_view() {
    let mut h = Harness::new(TREE, sampling(false), 100, 40).await;
    h.keys("5").await;
    assert_screen!("surface_view", h.screen());
}

#[tokio::test]
async fn help() {
    let mut h = Harness::new(TREE, sampling(true), 80, 24).await;
    h.keys("?").await;
    assert_screen!("help", h.screen());
}

#[tokio::test]
async fn config_panel_with_an_invalid_value() {
    let mut h = Harness::new(TREE, sampling(true), 80, 24).await;
    h.keys("6<Down><Enter>0<Enter>").await;
    assert_screen!("config_panel_with_an_invalid_value", h.screen());
    // calls now get the unknown-tool result, as after any failed load
    h.keys("r").await;
    let result = &h.app.state.shown_record().unwrap().ran().unwrap();
    assert_eq!(result.code().map(|c| c.code()), Some("UNKNOWN_TOOL"));
}

#[tokio::test]
async fn layout_80x24_with_a_spilled_grep() {
    let lines: String = (1..=6).map(|i| format!("needle {i}\n")).collect();
    let files = [("notes.txt", lines.as_str())];
    let config = json!({"sampleOverCapGlobResults": true, "grepMaxMatches": 4});
    let mut h = Harness::new(&files, config, 80, 24).await;
    h.keys("te<C-u>needle<Tab><Tab>*.txt<Enter><Esc>").await;
    assert_screen!("layout_80x24", h.screen());
}

/// At 80 columns every key-bar item is whole, the help key is always
/// there, and a status message too long for one row wraps onto a second
/// (the pane gives up the row) instead of being cut.
#[tokio::test]
async fn at_80_columns_hints_fit_and_a_long_message_wraps() {
    let mut h = Harness::new(TREE, sampling(true), 80, 24).await;
    for tab in ["1", "6", "7", "8"] {
        h.keys(tab).await;
        let screen = h.screen();
        let bar = screen.lines().last().unwrap();
        assert!(bar.ends_with("?  help"), "tab {tab}: {bar}");
        assert!(bar.chars().count() <= 80, "{bar}");
    }
    h.keys("1").await;
    let long = format!("a message of {}words", "many ".repeat(20));
    h.app.state.status = Some(super::state::session::Status {
        text: long.clone(),
        alert: false,
    });
    let screen = h.screen();
    let rows: Vec<&str> = screen.lines().collect();
    assert_eq!(rows.len(), 24);
    assert!(rows[7].starts_with(" • a message of many"), "{screen}");
    assert!(rows[8].trim_end().ends_with("many words"), "{screen}");
    assert!(rows[9].starts_with("┌ Text"), "{screen}");
    let shown: String = format!("{}{}", rows[7], rows[8])
        .split_whitespace()
        .collect();
    let want: String = format!("•{long}").split_whitespace().collect();
    assert_eq!(shown, want, "nothing of the message is cut");
    // The pane's scrollable area is one row shorter while it shows.
    assert_eq!(h.app.state.viewports.pane.rows, 12);
}

#[tokio::test]
async fn a_running_call_shows_a_spinner_and_elapsed_time() {
    let mut h = Harness::new(TREE, sampling(true), 80, 24).await;
    // Not handed to the runner: the call stays in flight.
    let effects = h.app.handle_key(&KeyEvent::from(KeyCode::Enter));
    assert!(matches!(effects.as_slice(), [Effect::Run { .. }]));
    assert_screen!("running_call", h.screen());
}

#[tokio::test]
async fn rg_missing_shows_the_load_warning_and_how_to_install_rg() {
    let mut h = Harness::new(TREE, sampling(true), 80, 24).await;
    // The load outcome of a machine without rg, as the engine reports it.
    let effects = h.app.apply(super::keymap::Action::ApplyConfig);
    assert_eq!(effects.len(), 1);
    h.app.on_event(AppEvent::Loaded {
        generation: 2,
        outcome: Ok(LoadInfo {
            sections: Vec::new(),
            tools: Vec::new(),
            warnings: vec![RG_MISSING_WARNING.to_owned()],
        }),
    });
    h.app.state.status = None;
    assert_screen!("rg_missing", h.screen());
}

#[tokio::test]
async fn resizing_redraws_the_same_state_at_any_size() {
    let mut h = Harness::new(TREE, sampling(true), 120, 40).await;
    h.keys("e*<Enter><Esc>").await;
    for (cols, rows) in [(80, 24), (60, 16), (200, 60), (20, 8)] {
        h.terminal.backend_mut().resize(cols, rows);
        h.terminal.autoresize().unwrap();
        let screen = h.screen();
        assert_eq!(screen.lines().count(), usize::from(rows));
    }
    h.terminal.backend_mut().resize(80, 24);
    h.terminal.autoresize().unwrap();
    let screen = h.screen();
    assert!(screen.contains("README.md"), "{screen}");
}

#[tokio::test]
async fn history_of_calls() {
    let mut h = Harness::new(TREE, sampling(true), 100, 24).await;
    h.keys("e*.ts<Enter><Esc>te<C-u>fn<Enter>p(<Enter><Esc>7")
        .await;
    assert_eq!(h.app.state.history.len(), 3);
    assert_rg_screen!("history_of_calls", h.screen());
    // an earlier call's result, shown again
    h.keys("gk<Enter>").await;
    assert_eq!(h.app.state.shown, Some(0));
    assert!(h.screen().contains("vendor/a.ts"));
}

/// The Transcript tab driven by keys, with the real effect runner (real
/// bash, real rg): recording, saving, replaying side by side.
mod transcript_tab {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use serde_json::json;
    use tokio::sync::mpsc;

    use crate::interactive::app::App;
    use crate::interactive::effects::{AppEvent, Effect, EffectRunner};
    use crate::interactive::event_loop;
    use crate::interactive::state::session::SessionInfo;
    use crate::interactive::state::transcript::ReplayState;
    use crate::interactive::tabs::Tab;
    use fs_search_transcript::parse;

    struct Session {
        dir: tempfile::TempDir,
        app: App,
        runner: EffectRunner,
        events: mpsc::UnboundedReceiver<AppEvent>,
    }

    impl Session {
        async fn new() -> Self {
            // A fixed-length name, so the screen's layout never depends on it.
            let dir = tempfile::Builder::new()
                .prefix("fswbt-")
                .rand_bytes(6)
                .tempdir_in("/tmp")
                .unwrap();
            let tree = dir.path().join("tree");
            std::fs::create_dir_all(tree.join("b")).unwrap();
            std::fs::write(tree.join("a.txt"), "needle one\n").unwrap();
            std::fs::write(tree.join("b/c.txt"), "needle two\n").unwrap();
            std::fs::create_dir(dir.path().join("saved")).unwrap();
            let info = SessionInfo {
                workdir: tree.display().to_string(),
                session_id: "session-rec".into(),
                spill_root: Some(dir.path().join("spill")),
                recordings_dir: dir.path().join("saved"),
                log_path: None,
                rg: fs_search_process::RgInfo::detect(),
                executor: None,
                contract: Default::default(),
            };
            let (tx, events) = mpsc::unbounded_channel();
            let runner = EffectRunner::new(
                tree,
                Some(dir.path().join("spill")),
                "session-rec".into(),
                tx,
            );
            let config = json!({"sampleOverCapGlobResults": true, "grepMaxMatches": 1});
            let mut app = App::new(info, &config);
            app.state.transcripts.save_dir = dir.path().join("saved");
            let mut session = Self {
                dir,
                app,
                runner,
                events,
            };
            let effects = session.app.start();
            session.settle(effects).await;
            session
        }

        /// Carries out `effects` and every effect their outcomes ask for.
        async fn settle(&mut self, effects: Vec<Effect>) {
            let mut pending = effects.iter().filter(|e| **e != Effect::Cancel).count();
            self.runner.apply_all(effects);
            while pending > 0 {
                let event = tokio::time::timeout(Duration::from_secs(30), self.events.recv())
                    .await
                    .unwrap()
                    .unwrap();
                if matches!(event, AppEvent::Finished { .. } | AppEvent::Lost { .. }) {
                    self.runner.finished();
                }
                pending -= 1;
                let more = self.app.on_event(event);
                pending += more.len();
                self.runner.apply_all(more);
            }
        }

        async fn key(&mut self, code: KeyCode) {
            let effects = self
                .app
                .handle_key(&KeyEvent::new(code, KeyModifiers::NONE));
            self.settle(effects).await;
        }

        async fn keys(&mut self, text: &str) {
            for c in text.chars() {
                self.key(KeyCode::Char(c)).await;
            }
        }

        fn screen(&mut self) -> String {
            let mut terminal = Terminal::new(TestBackend::new(110, 32)).unwrap();
            event_loop::draw(&mut terminal, &mut self.app, Instant::now()).unwrap();
            let buffer = terminal.backend().buffer();
            (0..buffer.area.height)
                .map(|y| {
                    (0..buffer.area.width)
                        .map(|x| buffer[(x, y)].symbol())
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join("\n")
        }

        async fn open(&mut self, file: &Path) {
            self.app.state.transcripts.replay = ReplayState::List;
            let index = self
                .app
                .state
                .transcripts
                .files
                .iter()
                .position(|f| f == file);
            self.app.state.transcripts.selected = index.unwrap();
            self.key(KeyCode::Enter).await;
        }
    }

    #[tokio::test]
    async fn r_records_the_calls_and_the_saved_transcript_replays_clean_side_by_side() {
        let mut s = Session::new().await;
        s.keys("8R").await;
        assert_eq!(s.app.state.tab, Tab::Transcript);
        assert!(s.app.state.transcripts.recording.is_some());
        assert!(s.screen().contains("● REC 0"), "{}", s.screen());
        // A grep over its cap (saved to the spill store), then a glob.
        s.keys("te").await;
        s.keys("needle").await;
        s.key(KeyCode::Enter).await;
        s.key(KeyCode::Esc).await;
        s.keys("tr").await;
        assert_eq!(s.app.state.history.len(), 2);
        s.keys("8R").await;
        let saved = s.dir.path().join("saved/workbench-session-rec.jsonl");
        let status = s.app.state.status.clone().unwrap();
        assert_eq!(
            status.text,
            format!("recorded 2 call(s) to {}", saved.display())
        );
        let text = std::fs::read_to_string(&saved).unwrap();
        let t = parse("saved", &text).unwrap();
        assert_eq!(t.header.tree, "../tree");
        assert_eq!(t.records.len(), 2);
        let grep = &t.records[0];
        assert_eq!(
            (grep.call.tool.as_str(), &grep.call.args),
            ("grep", &json!({"pattern": "needle"}))
        );
        let spill = grep.outcome.spill.as_ref().unwrap();
        assert!(spill.locator.starts_with("<SPILL>/session-"), "{spill:?}");
        assert!(grep.outcome.text.starts_with("Found 1 of 2 matches"));
        assert_eq!(t.records[1].outcome.text, "No files found");

        s.open(&saved).await;
        let ReplayState::Loaded { replay, .. } = &s.app.state.transcripts.replay else {
            panic!("{:?}", s.app.state.transcripts.replay);
        };
        assert!(replay.all_match(), "{}", replay.diffs());
        let screen = s.screen();
        for needle in [
            "✓ matches",
            "record 1/2 \"call-1-grep\"",
            " recorded ",
            " current (replayed now) ",
            "Found 1 of 2 matches",
        ] {
            assert!(screen.contains(needle), "{needle}\n{screen}");
        }
        s.keys("n").await;
        assert!(s.screen().contains("record 2/2 \"call-2-glob\""));
        // d has no difference to go to, and says so in the status line.
        s.keys("d").await;
        let screen = s.screen();
        assert!(screen.contains("record 2/2"), "{screen}");
        assert!(
            screen.contains("• nothing differs: all 2 record(s) match what runs now"),
            "{screen}"
        );
    }

    #[tokio::test]
    async fn a_changed_record_is_shown_first_with_both_sides_marked() {
        let mut s = Session::new().await;
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/transcripts/grep-footers.jsonl");
        let text = std::fs::read_to_string(&fixture)
            .unwrap()
            .replace(
                "../trees/mixed",
                &fixture
                    .parent()
                    .unwrap()
                    .join("../trees/mixed")
                    .display()
                    .to_string(),
            )
            .replacen(
                r#"{"text":"Line 1: export const spaced = 'needle in a spaced name'"}"#,
                r#"{"text":"Line 1: a stale expectation"}"#,
                1,
            );
        let changed = s.app.state.transcripts.save_dir.join("changed.jsonl");
        std::fs::write(&changed, text).unwrap();
        s.app.state.transcripts.files.push(changed.clone());
        s.keys("8").await;
        s.open(&changed).await;
        let screen = s.screen();
        for needle in [
            "≠ differs",
            "record 2/8 \"grep-one-match\"",
            "1 of 8 record(s) differ",
            "- Line 1: a stale expectation",
            "+ Line 1: export const spaced",
        ] {
            assert!(screen.contains(needle), "{needle}\n{screen}");
        }
        insta::with_settings!({
            prepend_module_to_snapshot => false,
            filters => vec![
                (r"fswbt-[A-Za-z0-9]{6}", "fswbt-RANDOM"),
                (r"· rg [0-9]+\.[0-9]+\.[0-9]+", "· rg N.N.N"),
            ],
        }, {
            insta::assert_snapshot!("transcript_replay_changed_record", screen);
        });
        // d cycles through the differences: there is only this one.
        s.keys("nd").await;
        assert!(s.screen().contains("record 2/8"));
        s.keys("d").await;
        let screen = s.screen();
        assert!(screen.contains("record 2/8"), "{screen}");
        assert!(
            screen.contains("• this is the only record that differs"),
            "{screen}"
        );
        s.keys("b").await;
        assert!(matches!(s.app.state.transcripts.replay, ReplayState::List));
    }

    /// grep-footers.jsonl with one expectation changed, replayed: the
    /// differing line is cut at the side's edge; h/l scroll it sideways
    /// and z wraps it, so its end can be read.
    #[tokio::test]
    async fn a_cut_line_scrolls_sideways_and_wraps() {
        let mut s = Session::new().await;
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/transcripts/grep-footers.jsonl");
        let tree = fixture.parent().unwrap().join("../trees/mixed");
        let text = std::fs::read_to_string(&fixture)
            .unwrap()
            .replace("../trees/mixed", &tree.display().to_string())
            .replacen(
                r#"{"text":"Line 1: export const spaced = 'needle in a spaced name'"}"#,
                r#"{"text":"Line 1: a stale expectation"}"#,
                1,
            );
        let changed = s.app.state.transcripts.save_dir.join("changed.jsonl");
        std::fs::write(&changed, text).unwrap();
        s.app.state.transcripts.files.push(changed.clone());
        s.keys("8").await;
        s.open(&changed).await;
        let end = "in a spaced name'";
        let cut = s.screen();
        assert!(cut.contains("'needle in a spaced n…"), "{cut}");
        assert!(!cut.contains(end), "{cut}");
        // l scrolls both sides right; the cut-off start is marked.
        s.keys("l").await;
        let screen = s.screen();
        assert!(
            screen.contains(" current (replayed now) (from cell 17) "),
            "{screen}"
        );
        assert!(
            screen.contains("+ …onst spaced = 'needle in a spaced name'"),
            "{screen}"
        );
        // h comes back, not past the start.
        s.keys("hh").await;
        assert_eq!(s.app.state.transcripts.view.offset, 0);
        assert_eq!(s.screen(), cut);
        // z wraps: the whole line shows, its continuation marked.
        s.keys("z").await;
        let screen = s.screen();
        assert!(screen.contains("'needle in a spaced na│"), "{screen}");
        assert!(screen.contains("│┆ me'"), "{screen}");
        assert!(screen.contains("(wrapped)"), "{screen}");
        insta::with_settings!({
            prepend_module_to_snapshot => false,
            filters => vec![
                (r"fswbt-[A-Za-z0-9]{6}", "fswbt-RANDOM"),
                (r"· rg [0-9]+\.[0-9]+\.[0-9]+", "· rg N.N.N"),
            ],
        }, {
            insta::assert_snapshot!("transcript_replay_wrapped", screen);
        });
        s.keys("l").await;
        assert!(
            s.screen()
                .contains("• lines wrap: z cuts them again to scroll sideways"),
            "{}",
            s.screen()
        );
    }

    /// o types the path of a transcript outside the usual places (Tab
    /// completes it), Enter adds and chooses it, Enter replays it.
    #[tokio::test]
    async fn o_opens_a_transcript_anywhere_by_its_path() {
        let mut s = Session::new().await;
        s.keys("8").await;
        let before = s.app.state.transcripts.files.len();
        s.keys("o").await;
        assert!(s.screen().contains(" open: "), "{}", s.screen());
        // cargo runs the tests in tui/: the path is relative to it.
        s.keys("../fixtures/transcripts/grep-foo").await;
        s.key(KeyCode::Tab).await;
        let typed = s.app.state.transcripts.prompt.as_ref().unwrap().value();
        assert_eq!(typed, "../fixtures/transcripts/grep-footers.jsonl");
        s.key(KeyCode::Enter).await;
        assert_eq!(s.app.state.editing, None);
        let chosen = s.app.state.transcripts.selected_file().unwrap();
        let fixture = std::path::absolute("../fixtures/transcripts/grep-footers.jsonl").unwrap();
        assert_eq!(chosen, fixture);
        assert!(s.app.state.transcripts.files.len() <= before + 1);
        let screen = s.screen();
        assert!(
            screen.contains(&format!("• added {}", fixture.display())),
            "{screen}"
        );
        s.key(KeyCode::Enter).await;
        let ReplayState::Loaded { replay, .. } = &s.app.state.transcripts.replay else {
            panic!("{:?}", s.app.state.transcripts.replay);
        };
        assert_eq!(replay.checks.len(), 8);
        // A path that names nothing yet can still be chosen, to follow.
        s.keys("bo").await;
        s.keys("/nonexistent/later.jsonl").await;
        s.key(KeyCode::Enter).await;
        assert!(
            s.screen().contains("does not exist yet: f follows it"),
            "{}",
            s.screen()
        );
    }

    impl Session {
        /// `a` on `file`, the `values` typed, Enter: the Ablate effect,
        /// handed to the runner (its reports are left to [`Self::ablated`]).
        fn start_ablation(&mut self, file: &Path, values: &str) {
            self.app.state.tokens.tokenizer =
                crate::interactive::state::tokens::TokenizerStatus::Ready(
                    fs_search_process::SharedTokenizer(std::sync::Arc::new(
                        fs_search_tokens::Tokenizer::embedded().unwrap(),
                    )),
                );
            self.app.state.tab = Tab::Transcript;
            self.app.state.transcripts.selected = self
                .app
                .state
                .transcripts
                .files
                .iter()
                .position(|f| f == file)
                .unwrap();
            let press =
                |app: &mut App, code| app.handle_key(&KeyEvent::new(code, KeyModifiers::NONE));
            assert!(press(&mut self.app, KeyCode::Char('a')).is_empty());
            for _ in 0..60 {
                press(&mut self.app, KeyCode::Backspace);
            }
            for c in values.chars() {
                press(&mut self.app, KeyCode::Char(c));
            }
            let effects = press(&mut self.app, KeyCode::Enter);
            assert!(
                matches!(effects.as_slice(), [Effect::Ablate { .. }]),
                "{effects:?}"
            );
            self.runner.apply_all(effects);
        }

        /// Hands the runner's reports to the app until the ablation ends.
        async fn ablated(&mut self) {
            loop {
                let event = tokio::time::timeout(Duration::from_secs(60), self.events.recv())
                    .await
                    .unwrap()
                    .unwrap();
                let end = matches!(event, AppEvent::Ablated { .. });
                let more = self.app.on_event(event);
                self.runner.apply_all(more);
                if end {
                    return;
                }
            }
        }

        /// grep-footers.jsonl, its tree named absolutely, in the save dir.
        fn footers_fixture(&mut self) -> std::path::PathBuf {
            let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../fixtures/transcripts/grep-footers.jsonl");
            let tree = fixture.parent().unwrap().join("../trees/mixed");
            let text = std::fs::read_to_string(&fixture)
                .unwrap()
                .replace("../trees/mixed", &tree.display().to_string());
            let copy = self.app.state.transcripts.save_dir.join("footers.jsonl");
            std::fs::write(&copy, text).unwrap();
            self.app.state.transcripts.files.push(copy.clone());
            copy
        }
    }

    /// The ablate prompt: empty, its suggestion shown
    /// in its place, and what is typed replaces the suggestion.
    #[tokio::test]
    async fn the_ablate_prompt_shows_its_suggestion_until_something_is_typed() {
        let mut s = Session::new().await;
        let file = s.footers_fixture();
        s.app.state.tab = Tab::Transcript;
        s.app.state.transcripts.selected = s
            .app
            .state
            .transcripts
            .files
            .iter()
            .position(|f| *f == file)
            .unwrap();
        s.keys("a").await;
        let screen = s.screen();
        assert!(screen.contains(" > grepMaxMatches=50,100,250 "), "{screen}");
        insta::with_settings!({
            prepend_module_to_snapshot => false,
            filters => vec![
                (r"fswbt-[A-Za-z0-9]{6}", "fswbt-RANDOM"),
                (r"· rg [0-9]+\.[0-9]+\.[0-9]+", "· rg N.N.N"),
            ],
        }, {
            insta::assert_snapshot!("transcript_ablate_prompt", screen);
        });
        s.keys("globMaxResults=5").await;
        let screen = s.screen();
        let prompt = screen
            .lines()
            .find(|l| l.contains(" > "))
            .unwrap_or_default();
        assert!(prompt.contains(" > globMaxResults=5 "), "{prompt}");
        assert!(!prompt.contains("grepMaxMatches"), "{prompt}");
    }

    #[tokio::test]
    async fn a_ablates_the_chosen_transcript_into_charts_and_a_diff_against_the_baseline() {
        use crate::interactive::state::ablate::AblatePhase;
        let mut s = Session::new().await;
        let file = s.footers_fixture();
        s.start_ablation(&file, "grepMaxMatches=1,1000");
        assert!(s.screen().contains("Esc cancels"), "{}", s.screen());
        s.ablated().await;
        let phase = &s.app.state.ablate.as_ref().unwrap().phase;
        let AblatePhase::Done { done, variant, .. } = phase else {
            panic!("{phase:?}");
        };
        assert_eq!((done.variants.len(), *variant), (3, 1));
        assert!(done.variants[1].changed > 0);
        let screen = s.screen();
        for needle in [
            " variants (↑↓) ",
            "1: grepMaxMatches=1",
            "2: grepMaxMatches=1000",
            " page tokens per variant ",
            " calls by page tokens (this variant) ",
            "changed call(s)",
        ] {
            assert!(screen.contains(needle), "{needle}\n{screen}");
        }
        insta::with_settings!({
            prepend_module_to_snapshot => false,
            filters => vec![
                (r"fswbt-[A-Za-z0-9]{6}", "fswbt-RANDOM"),
                (r"· rg [0-9]+\.[0-9]+\.[0-9]+", "· rg N.N.N"),
            ],
        }, {
            // The key bar names only keys the ablate mode acts on.
            let bar = screen.lines().last().unwrap_or_default();
            assert!(!bar.contains("follow") && !bar.contains("next diff"), "{bar}");
            insta::assert_snapshot!("transcript_ablate_result", screen);
        });
        s.key(KeyCode::Enter).await;
        let screen = s.screen();
        for needle in [" baseline ", " variant 1 ", "↑↓ h/l scroll"] {
            assert!(screen.contains(needle), "{needle}\n{screen}");
        }
        assert!(
            screen
                .lines()
                .any(|l| l.contains("│- ") || l.contains("- ")),
            "{screen}"
        );
        s.keys("bb").await;
        assert!(s.app.state.ablate.is_none());
    }

    /// The ablate mode's diff: a changed call opened
    /// against the baseline cuts its long lines at the side's edge; h/l
    /// scroll them sideways and z wraps them, as in the replay view.
    #[tokio::test]
    async fn the_ablate_diff_scrolls_sideways_and_wraps() {
        let mut s = Session::new().await;
        let file = s.footers_fixture();
        s.start_ablation(&file, "grepMaxMatches=1");
        s.ablated().await;
        // Before a call is opened, h/l and z say what they are for.
        s.keys("l").await;
        let screen = s.screen();
        assert!(
            screen.contains("• h/l and z scroll an opened call: Enter opens one"),
            "{screen}"
        );
        s.key(KeyCode::Enter).await;
        let end = "search within it.)";
        let cut = s.screen();
        assert!(cut.contains("↑↓ h/l scroll · z wrap"), "{cut}");
        assert!(
            cut.contains("+ (Full grep result stored at: <SPILL>/session-"),
            "{cut}"
        );
        assert!(!cut.contains(end), "{cut}");
        // Seven l: 112 cells to the right, the footer's end is in view;
        // the replay view's own offset is left alone.
        s.keys("lllllll").await;
        let screen = s.screen();
        assert!(screen.contains(" variant 1 (from cell 113) "), "{screen}");
        assert!(
            screen.contains("+ …r grep this path to search within it.)"),
            "{screen}"
        );
        assert_eq!(s.app.state.transcripts.view.offset, 0);
        // h comes back, not past the start.
        s.keys("hhhhhhhh").await;
        assert_eq!(s.screen(), cut);
        // z wraps: the whole footer shows, its continuations marked.
        s.keys("z").await;
        let screen = s.screen();
        assert!(
            screen.contains("│┆ limit, or grep this path to search within it.)"),
            "{screen}"
        );
        assert!(screen.contains(" baseline (wrapped) "), "{screen}");
        insta::with_settings!({
            prepend_module_to_snapshot => false,
            filters => vec![
                (r"fswbt-[A-Za-z0-9]{6}", "fswbt-RANDOM"),
                (r"· rg [0-9]+\.[0-9]+\.[0-9]+", "· rg N.N.N"),
            ],
        }, {
            insta::assert_snapshot!("transcript_ablate_diff_wrapped", screen);
        });
        s.keys("l").await;
        assert!(
            s.screen()
                .contains("• lines wrap: z cuts them again to scroll sideways"),
            "{}",
            s.screen()
        );
    }

    /// "why" from a replayed record: the fixture
    /// `include-rules.jsonl` is replayed in a materialised copy of its tree;
    /// `w` in the Transcript tab explains its first record (grep `needle`,
    /// include `*.ts`) there, with real rg, beside the replay; `u` lists
    /// what it did not search; Esc closes the panel.
    #[tokio::test]
    async fn w_explains_a_replayed_record_in_its_materialised_tree() {
        let mut s = Session::new().await;
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/transcripts/include-rules.jsonl");
        s.app.state.transcripts.files.push(fixture.clone());
        s.keys("8").await;
        s.open(&fixture).await;
        let ReplayState::Loaded { replay, record, .. } = &s.app.state.transcripts.replay else {
            panic!("{:?}", s.app.state.transcripts.replay);
        };
        assert_eq!(
            replay.checks[*record].record.call.name,
            "grep-include-filter"
        );
        let root = replay.tree.root().to_path_buf();
        assert!(replay.tree.is_materialised());
        s.keys("wsrc/util.js src/app.ts").await;
        s.key(KeyCode::Enter).await;
        assert_eq!(s.app.state.tab, Tab::Transcript, "beside the replay");
        let screen = s.screen();
        for needle in [
            "why src/util.js src/app.ts (replayed grep-incl",
            "src/util.js: not-searched (include)",
            "src/app.ts: page",
            "record 1/",
        ] {
            assert!(screen.contains(needle), "{needle}\n{screen}");
        }
        s.keys("u").await;
        let screen = s.screen();
        assert!(screen.contains("unsearched under `.`"), "{screen}");
        assert!(screen.contains("include"), "{screen}");
        // The explanation ran in the replay's tree, which is still there.
        assert!(root.join("src/util.js").is_file());
        let effects = s
            .app
            .handle_key(&KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        assert_eq!(effects, vec![Effect::StopExplaining]);
        assert!(s.app.state.explain.is_none());
    }

    #[tokio::test]
    async fn esc_cancels_a_real_ablation_before_its_next_call() {
        use crate::interactive::state::ablate::{AblatePhase, AblateStop};
        let mut s = Session::new().await;
        let file = s.footers_fixture();
        s.start_ablation(&file, "grepMaxMatches=1");
        // The task has not run yet (one thread): the cancel is in before
        // its first call.
        let effects = s
            .app
            .handle_key(&KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        assert_eq!(effects, vec![Effect::CancelAblation]);
        s.runner.apply_all(effects);
        s.ablated().await;
        let phase = &s.app.state.ablate.as_ref().unwrap().phase;
        assert!(
            matches!(phase, AblatePhase::Stopped(AblateStop::Cancelled)),
            "{phase:?}"
        );
        assert!(s.screen().contains("was cancelled"), "{}", s.screen());
    }
}

/// The "why" panel: a grep finds nothing in `vendor/`, which an
/// `.ignore` rule keeps rg out of; `w`, the path (Tab-completed), Enter:
/// the verdict and the rule stand beside the page, then `u` lists what
/// the call did not search.
#[tokio::test]
async fn why_panel_beside_the_page() {
    let mut files = TREE.to_vec();
    files.push((".ignore", "vendor/\n"));
    let mut h = Harness::new(&files, sampling(true), 100, 30).await;
    h.keys("te<C-u>export<Enter><Esc>").await;
    assert_eq!(
        h.app.state.shown_record().unwrap().text(),
        "No matches found"
    );
    h.keys("wven<Tab>a<Tab>").await;
    assert_screen!("why_panel_typing", h.screen());
    h.keys("<Enter>").await;
    let screen = h.screen();
    assert!(
        screen.contains("vendor/a.ts: not-searched (ignored)"),
        "{screen}"
    );
    assert_screen!("why_panel_explained", screen);
    h.keys("u").await;
    let screen = h.screen();
    assert!(screen.contains("unsearched under"), "{screen}");
    assert_screen!("why_panel_unsearched", screen);
}

/// The Text tab through a host lens.
mod lens;
