//! Every key binding, in one table: which key does what in which context,
//! and how it is labelled in the key bar and the help. To add a binding,
//! add an [`Action`] variant (handled in `App::apply`) and a row to
//! [`BINDINGS`]; the key bar and the help follow. A help text that names
//! a tab takes the tab's digit and label from [`Tab`].

use std::borrow::Cow;
use std::sync::LazyLock;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::state::Editing;
use super::state::editor::Field;
use super::state::transcript::TranscriptAction;
use super::tabs::Tab;

/// What a key asks the app to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    ToggleHelp,
    CloseOverlay,
    /// Enter while editing: run the call, or apply the config.
    Submit,
    Run,
    Cancel,
    Edit(Field),
    StopEditing,
    NextField,
    PrevField,
    ToggleTool,
    NextTab,
    PrevTab,
    /// A digit: the tab at that position. The table's row holds the
    /// first tab; `lookup` gives the pressed digit's own.
    GoTab(Tab),
    ScrollUp,
    ScrollDown,
    PageUp,
    PageDown,
    Top,
    Bottom,
    OpenSpill,
    OlderCall,
    NewerCall,
    ShowSelected,
    EditConfig,
    ToggleSampling,
    ApplyConfig,
    /// A key of the Transcript tab (R records from any tab).
    Transcript(TranscriptAction),
    /// Open the "why" panel for the shown call and type a path.
    Why,
    /// List what the shown call did not search (in the "why" panel).
    Unsearched,
    /// Close the "why" panel.
    CloseWhy,
    WhyScrollUp,
    WhyScrollDown,
    /// The Text tab's next host lens (none, each host's newest, none).
    CycleLens,
}

/// Where a binding applies, looked up from the most specific context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    /// Everywhere, even while editing.
    Global,
    /// A text field has the keyboard; unbound keys edit the field.
    Editing,
    /// The help or the spill file is open over the panes.
    Overlay,
    /// The "why" panel's path is being typed; other keys edit it.
    ExplainPath,
    /// The path of a transcript to open is being typed; other keys edit it.
    TranscriptPath,
    /// The given tab is showing.
    Tab(Tab),
    /// No field is being edited.
    Normal,
}

/// A key: a code and the modifiers that must be held (Shift is ignored
/// for characters, since terminals differ in reporting it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Char(char),
    Ctrl(char),
    Code(KeyCode),
    /// Any of the digits 1..=9.
    Digit,
}

impl Key {
    pub(crate) fn matches(self, event: &KeyEvent) -> bool {
        let ctrl = event.modifiers.contains(KeyModifiers::CONTROL);
        let alt = event.modifiers.contains(KeyModifiers::ALT);
        match (self, event.code) {
            (Key::Char(c), KeyCode::Char(e)) => !ctrl && !alt && c == e,
            (Key::Ctrl(c), KeyCode::Char(e)) => ctrl && c.eq_ignore_ascii_case(&e),
            (Key::Digit, KeyCode::Char(e)) => !ctrl && !alt && ('1'..='9').contains(&e),
            (Key::Code(c), e) => !ctrl && !alt && c == e,
            _ => false,
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone)]
pub(crate) struct Binding {
    pub context: Context,
    pub keys: &'static [Key],
    /// How the keys are written on screen.
    pub label: &'static str,
    pub action: Action,
    /// The key bar's word for it; empty: shown in the help only.
    pub short: &'static str,
    pub help: Cow<'static, str>,
}

fn b(
    context: Context,
    keys: &'static [Key],
    label: &'static str,
    action: Action,
    short: &'static str,
    help: impl Into<Cow<'static, str>>,
) -> Binding {
    Binding {
        context,
        keys,
        label,
        action,
        short,
        help: help.into(),
    }
}

use Action as A;
use Context as C;
use Key as K;
use KeyCode::{
    BackTab, Backspace, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab as TabKey,
    Up,
};
use TranscriptAction as T;

/// How far h/l scroll the replayed record sideways, in cells.
pub(crate) const SIDEWAYS: i16 = 16;

/// The whole key map. Within a context the first matching row wins.
pub(crate) static BINDINGS: LazyLock<Vec<Binding>> = LazyLock::new(bindings);

#[rustfmt::skip]
fn bindings() -> Vec<Binding> {
    let config = Tab::Config.title();
    let transcript = Tab::Transcript.digit();
    let hosts = fs_search_lens::hosts().join(", ");
    vec![
    b(C::Global, &[K::Ctrl('c')], "^C", A::Quit, "", "quit (restores the terminal)"),
    // Editing a field: other keys edit its text (tui-input).
    b(C::Editing, &[K::Code(Enter)], "Enter", A::Submit, "run", format!("run the call (in the {config} tab: apply and reload)")),
    b(C::Editing, &[K::Code(Esc)], "Esc", A::StopEditing, "done", "stop editing"),
    b(C::Editing, &[K::Code(TabKey)], "Tab", A::NextField, "next field", "next field"),
    b(C::Editing, &[K::Code(BackTab)], "S-Tab", A::PrevField, "", "previous field"),
    b(C::Editing, &[K::Ctrl('t')], "^T", A::ToggleTool, "glob/grep", "switch the tool between glob and grep"),
    b(C::Editing, &[K::Ctrl('x')], "^X", A::Cancel, "cancel", "cancel the running call"),
    b(C::Editing, &[K::Code(PageUp)], "PgUp", A::PageUp, "", "scroll the pane up"),
    b(C::Editing, &[K::Code(PageDown)], "PgDn", A::PageDown, "", "scroll the pane down"),
    // Typing the path of the "why" panel (other keys edit it).
    b(C::ExplainPath, &[K::Code(Enter)], "Enter", A::Submit, "explain", "explain why the path is (or is not) on the shown call's page"),
    b(C::ExplainPath, &[K::Code(TabKey)], "Tab", A::NextField, "complete", "complete the path from the call's workdir (the candidates show in the status line)"),
    b(C::ExplainPath, &[K::Code(Esc)], "Esc", A::StopEditing, "done", "stop typing (the panel stays; Esc again closes it)"),
    b(C::ExplainPath, &[K::Code(PageUp)], "PgUp", A::WhyScrollUp, "", "scroll the explanation up"),
    b(C::ExplainPath, &[K::Code(PageDown)], "PgDn", A::WhyScrollDown, "", "scroll the explanation down"),
    // Typing the path of a transcript to open (other keys edit it).
    b(C::TranscriptPath, &[K::Code(Enter)], "Enter", A::Submit, "add", "add the file to the list and choose it (Enter then replays it, f follows it; a file that does not exist yet can be followed)"),
    b(C::TranscriptPath, &[K::Code(TabKey)], "Tab", A::NextField, "complete", "complete the path (relative to the current directory; ~/ is home; the candidates show in the status line)"),
    b(C::TranscriptPath, &[K::Code(Esc)], "Esc", A::StopEditing, "cancel", "close the prompt"),
    // The help or the spill file is open.
    b(C::Overlay, &[K::Code(Esc), K::Char('?'), K::Char('o')], "Esc", A::CloseOverlay, "close", "close"),
    b(C::Overlay, &[K::Char('q')], "q", A::Quit, "quit", "quit"),
    b(C::Overlay, &[K::Code(Up), K::Char('k')], "↑/k", A::ScrollUp, "", "scroll up"),
    b(C::Overlay, &[K::Code(Down), K::Char('j')], "↓/j", A::ScrollDown, "scroll", "scroll down"),
    b(C::Overlay, &[K::Code(PageUp)], "PgUp", A::PageUp, "", "page up"),
    b(C::Overlay, &[K::Code(PageDown), K::Char(' ')], "PgDn", A::PageDown, "page", "page down"),
    b(C::Overlay, &[K::Code(Home), K::Char('g')], "g", A::Top, "", "top"),
    b(C::Overlay, &[K::Code(End), K::Char('G')], "G", A::Bottom, "", "bottom"),
    // Keys of one tab.
    b(C::Tab(Tab::Config), &[K::Code(Up), K::Char('k')], "↑/k", A::ScrollUp, "", "select the previous key"),
    b(C::Tab(Tab::Config), &[K::Code(Down), K::Char('j')], "↓/j", A::ScrollDown, "select", "select the next key"),
    b(C::Tab(Tab::Config), &[K::Code(Enter), K::Char('e')], "Enter", A::EditConfig, "edit", "edit the value (JSON; empty = absent), Enter applies"),
    b(C::Tab(Tab::Config), &[K::Char(' ')], "Space", A::ToggleSampling, "flip", "flip the selected true/false key (sampling, opt-ins) and reload"),
    b(C::Tab(Tab::Config), &[K::Char('a')], "a", A::ApplyConfig, "reload", "reload the plugin with the config as shown, unchanged (Enter and Space reload after their own change; a is for a retry after a failed load, or to see that the cached prefix stays)"),
    b(C::Tab(Tab::Text), &[K::Char('L')], "L", A::CycleLens, "lens", format!("show the page through the next agent host's lens (none, then {hosts}, then none again; each host's newest): exactly what its model receives, the verdict above it, ✂ where the host cut; the token counts follow, and later calls keep the lens")),
    b(C::Tab(Tab::History), &[K::Code(Up), K::Char('k')], "↑/k", A::ScrollUp, "", "select the previous call"),
    b(C::Tab(Tab::History), &[K::Code(Down), K::Char('j')], "↓/j", A::ScrollDown, "select", "select the next call"),
    b(C::Tab(Tab::History), &[K::Code(Enter)], "Enter", A::ShowSelected, "show", "show that call's result"),
    b(C::Tab(Tab::Transcript), &[K::Char('R')], "R", A::Transcript(T::ToggleRecording), "rec", "start recording this session's calls; R again stops and saves the transcript"),
    b(C::Tab(Tab::Transcript), &[K::Code(Up), K::Char('k')], "↑/k", A::Transcript(T::Up), "", "choose a transcript, or scroll the record"),
    b(C::Tab(Tab::Transcript), &[K::Code(Down), K::Char('j')], "↓/j", A::Transcript(T::Down), "move", "choose a transcript, or scroll the record"),
    b(C::Tab(Tab::Transcript), &[K::Code(Enter)], "Enter", A::Transcript(T::Open), "replay", "replay the chosen transcript on a fresh copy of its tree"),
    b(C::Tab(Tab::Transcript), &[K::Char('n'), K::Code(Right)], "n/→", A::Transcript(T::NextRecord), "next", "next record"),
    b(C::Tab(Tab::Transcript), &[K::Char('p'), K::Code(Left)], "p/←", A::Transcript(T::PrevRecord), "prev", "previous record"),
    b(C::Tab(Tab::Transcript), &[K::Char('d')], "d", A::Transcript(T::NextChanged), "next diff", "next record whose result changed"),
    b(C::Tab(Tab::Transcript), &[K::Char('b'), K::Code(Backspace)], "b", A::Transcript(T::Back), "back", "back to the list of transcripts"),
    b(C::Tab(Tab::Transcript), &[K::Char('a')], "a", A::Transcript(T::Ablate), "", "ablate the chosen transcript: type KEY=V1,V2,… (as workbench ablate --set), Enter runs it; ↑↓ variant, n/p changed call, Enter diff against the baseline (h/l sideways, z wrap)"),
    b(C::Tab(Tab::Transcript), &[K::Code(Esc)], "Esc", A::Transcript(T::CancelAblation), "", "cancel the running ablation (none running: close the \"why\" panel)"),
    b(C::Tab(Tab::Transcript), &[K::Char('f')], "f", A::Transcript(T::Follow), "follow", "follow the chosen recording as it grows: its new calls show up in the result tabs (f again stops)"),
    b(C::Tab(Tab::Transcript), &[K::Char('o')], "o", A::Transcript(T::OpenPath), "open file", "type the path of any transcript or recording (Tab completes) to add it to the list: then Enter replays it, f follows it"),
    b(C::Tab(Tab::Transcript), &[K::Char('l')], "h/l", A::Transcript(T::Sideways(SIDEWAYS)), "sideways", "scroll the replayed record's (or the opened ablate diff's) lines right (h: left), to read what is cut at the edge"),
    b(C::Tab(Tab::Transcript), &[K::Char('h')], "h", A::Transcript(T::Sideways(-SIDEWAYS)), "", "scroll the replayed record's (or the opened ablate diff's) lines left"),
    b(C::Tab(Tab::Transcript), &[K::Char('z')], "z", A::Transcript(T::ToggleWrap), "wrap", "wrap the replayed record's (or the opened ablate diff's) long lines (z again cuts them)"),
    // Browsing: no field is being edited.
    b(C::Normal, &[K::Char('q')], "q", A::Quit, "quit", "quit"),
    b(C::Normal, &[K::Char('?')], "?", A::ToggleHelp, "help", "help"),
    b(C::Normal, &[K::Char('e'), K::Char('/')], "e", A::Edit(Field::Pattern), "edit", "edit the pattern (also /)"),
    b(C::Normal, &[K::Char('p')], "p", A::Edit(Field::Path), "", "edit the path"),
    b(C::Normal, &[K::Char('i')], "i", A::Edit(Field::Include), "", "edit the include (sent with grep)"),
    b(C::Normal, &[K::Char('A')], "A", A::Edit(Field::Args), "", "edit the raw JSON arguments (sent exactly as typed)"),
    b(C::Normal, &[K::Char('t')], "t", A::ToggleTool, "glob/grep", "switch the tool between glob and grep"),
    b(C::Normal, &[K::Code(Enter), K::Char('r')], "Enter", A::Run, "run", "run the call (also r)"),
    b(C::Normal, &[K::Char('x')], "x", A::Cancel, "cancel", "cancel the running call (the abort reaches rg)"),
    b(C::Normal, &[K::Char('o')], "o", A::OpenSpill, "spill", "open the spill file of the shown result"),
    b(C::Normal, &[K::Char('w')], "w", A::Why, "why", "why is a path (not) on the shown call's page (in the Transcript tab: the replayed record's): type it (Tab completes), Enter explains, beside the page"),
    b(C::Normal, &[K::Code(TabKey)], "Tab", A::NextTab, "tab", "next tab"),
    b(C::Normal, &[K::Code(BackTab)], "S-Tab", A::PrevTab, "", "previous tab"),
    b(C::Normal, &[K::Digit], "1-9", A::GoTab(Tab::ALL[0]), "", "go to that tab"),
    b(C::Normal, &[K::Code(Up), K::Char('k')], "↑/k", A::ScrollUp, "", "scroll up"),
    b(C::Normal, &[K::Code(Down), K::Char('j')], "↓/j", A::ScrollDown, "scroll", "scroll down"),
    b(C::Normal, &[K::Code(PageUp)], "PgUp", A::PageUp, "", "page up"),
    b(C::Normal, &[K::Code(PageDown), K::Char(' ')], "PgDn", A::PageDown, "", "page down (also Space)"),
    b(C::Normal, &[K::Code(Home), K::Char('g')], "g", A::Top, "", "top (also Home)"),
    b(C::Normal, &[K::Code(End), K::Char('G')], "G", A::Bottom, "", "bottom (also End)"),
    b(C::Normal, &[K::Char('[')], "[", A::OlderCall, "", "show the previous call"),
    b(C::Normal, &[K::Char(']')], "]", A::NewerCall, "", "show the next call"),
    b(C::Normal, &[K::Char('u')], "u", A::Unsearched, "", "list what the shown call did not search, beside the page"),
    b(C::Normal, &[K::Char('K')], "K", A::WhyScrollUp, "", "scroll the \"why\" panel up"),
    b(C::Normal, &[K::Char('J')], "J", A::WhyScrollDown, "", "scroll the \"why\" panel down"),
    b(C::Normal, &[K::Code(Esc)], "Esc", A::CloseWhy, "", "close the \"why\" panel"),
    b(C::Normal, &[K::Char('R')], "R", A::Transcript(T::ToggleRecording), "", format!("start/stop recording the session's calls to a transcript (tab {transcript})")),
    ]
}

/// The contexts in force, most specific first.
pub(crate) fn contexts(editing: bool, overlay: bool, tab: Tab) -> Vec<Context> {
    if editing {
        vec![Context::Global, Context::Editing]
    } else if overlay {
        vec![Context::Global, Context::Overlay]
    } else {
        vec![Context::Global, Context::Tab(tab), Context::Normal]
    }
}

/// The contexts in force when `editing` has the keyboard (if anything
/// does), with or without an overlay, on `tab`.
pub(crate) fn contexts_for(editing: Option<Editing>, overlay: bool, tab: Tab) -> Vec<Context> {
    match editing {
        Some(Editing::ExplainPath) => explain_path_contexts(),
        Some(Editing::TranscriptPath) => vec![Context::Global, Context::TranscriptPath],
        _ => contexts(editing.is_some(), overlay, tab),
    }
}

/// The contexts in force while the "why" panel's path is typed.
pub(crate) fn explain_path_contexts() -> Vec<Context> {
    vec![Context::Global, Context::ExplainPath]
}

/// The action of `event` in `contexts`, if any.
pub(crate) fn lookup(contexts: &[Context], event: &KeyEvent) -> Option<Action> {
    contexts.iter().find_map(|context| {
        BINDINGS
            .iter()
            .filter(|b| b.context == *context)
            .find(|b| b.keys.iter().any(|k| k.matches(event)))
            .and_then(|b| match b.action {
                // A digit without a tab (9 while there are 8) does nothing.
                Action::GoTab(_) => digit_tab(event).map(Action::GoTab),
                action => Some(action),
            })
    })
}

/// The tab whose digit `event` is, if any.
fn digit_tab(event: &KeyEvent) -> Option<Tab> {
    match event.code {
        KeyCode::Char(c) => c.to_digit(10).and_then(Tab::from_digit),
        _ => None,
    }
}

/// The bindings shown in the key bar for `contexts`, in table order,
/// without a later context repeating a key or action already shown.
pub(crate) fn bar(contexts: &[Context]) -> Vec<&'static Binding> {
    let mut shown: Vec<&'static Binding> = Vec::new();
    for context in contexts.iter().skip(1) {
        for binding in BINDINGS
            .iter()
            .filter(|b| b.context == *context && !b.short.is_empty())
        {
            let taken = shown
                .iter()
                .any(|s| s.label == binding.label || s.action == binding.action);
            if !taken {
                shown.push(binding);
            }
        }
    }
    shown
}

/// How a binding's keys are written (the digit range follows the tabs).
pub(crate) fn label(binding: &Binding) -> String {
    if binding.keys == [Key::Digit] {
        format!("1-{}", Tab::ALL.len())
    } else {
        binding.label.to_owned()
    }
}

/// The heading of a context in the help.
pub(crate) fn context_title(context: Context) -> String {
    match context {
        Context::Global => "Anywhere".to_owned(),
        Context::Editing => "While editing a field (other keys edit the text)".to_owned(),
        Context::ExplainPath => "Typing the \"why\" path (other keys edit the text)".to_owned(),
        Context::TranscriptPath => {
            "Typing a transcript's path (other keys edit the text)".to_owned()
        }
        Context::Overlay => "Help and spill file".to_owned(),
        Context::Tab(tab) => format!("{} tab", tab.title()),
        Context::Normal => "Browsing (no field being edited)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn a_digit_carries_its_own_tab() {
        let normal = contexts(false, false, Tab::ALL[0]);
        for (i, tab) in Tab::ALL.iter().enumerate() {
            let digit = char::from_digit(u32::try_from(i + 1).unwrap(), 10).unwrap();
            assert_eq!(
                lookup(&normal, &key(KeyCode::Char(digit))),
                Some(Action::GoTab(*tab))
            );
        }
        // The digit after the last tab (while there is one) does nothing.
        if let Some(past) = char::from_digit(u32::try_from(Tab::ALL.len() + 1).unwrap(), 10) {
            assert_eq!(lookup(&normal, &key(KeyCode::Char(past))), None);
        }
    }

    #[test]
    fn the_most_specific_context_wins() {
        let enter = key(KeyCode::Enter);
        let history = contexts(false, false, Tab::History);
        assert_eq!(lookup(&history, &enter), Some(Action::ShowSelected));
        let text = contexts(false, false, Tab::Text);
        assert_eq!(lookup(&text, &enter), Some(Action::Run));
        let editing = contexts(true, false, Tab::History);
        assert_eq!(lookup(&editing, &enter), Some(Action::Submit));
    }

    #[test]
    fn printable_keys_are_left_to_the_field_while_editing() {
        let editing = contexts(true, false, Tab::Text);
        assert_eq!(lookup(&editing, &key(KeyCode::Char('q'))), None);
        assert_eq!(lookup(&editing, &key(KeyCode::Char('?'))), None);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(lookup(&editing, &ctrl_c), Some(Action::Quit));
    }

    #[test]
    fn shifted_characters_match_without_the_shift_flag() {
        let question = KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT);
        let normal = contexts(false, false, Tab::Text);
        assert_eq!(lookup(&normal, &question), Some(Action::ToggleHelp));
    }

    #[test]
    fn every_tab_has_a_digit_and_the_bar_never_repeats_a_label() {
        assert!(Tab::ALL.len() <= 9);
        for tab in Tab::ALL {
            let shown = bar(&contexts(false, false, tab));
            for (i, a) in shown.iter().enumerate() {
                assert!(shown[i + 1..].iter().all(|b| b.label != a.label), "{tab:?}");
            }
        }
    }
}
