//! The tabs of the lower pane, in one table: [`Tab::ALL`] gives their
//! order (a tab's digit key is its position + 1) and [`Tab::title`] their
//! labels. The tab bar, the key bar, the help and every hint that names a
//! tab take its digit and label from here, never from prose.
//!
//! To add a view: add a variant, list it in [`Tab::ALL`], title it, and
//! draw it in `views` (`pane_title`, `draw_pane`; `content::tab_doc` if it
//! shows a document).

/// One tab of the lower pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tab {
    /// The exact model-visible text of the shown call.
    Text,
    /// The canonical value.
    Value,
    /// The presentation meta (search card).
    Meta,
    /// Arguments, config, error, spill and warnings of the shown call.
    Call,
    /// Prompt sections and tool definitions.
    Surface,
    /// The plugin config.
    Config,
    /// Every call of the session.
    History,
    /// Recording the session; replaying a transcript side by side.
    Transcript,
}

impl Tab {
    /// Display order; the digit key of a tab is its position + 1.
    pub const ALL: [Tab; 8] = [
        Tab::Text,
        Tab::Value,
        Tab::Meta,
        Tab::Call,
        Tab::Surface,
        Tab::Config,
        Tab::History,
        Tab::Transcript,
    ];

    /// The tab's label.
    pub fn title(self) -> &'static str {
        match self {
            Tab::Text => "Text",
            Tab::Value => "Value",
            Tab::Meta => "Meta",
            Tab::Call => "Call",
            Tab::Surface => "Surface",
            Tab::Config => "Config",
            Tab::History => "History",
            Tab::Transcript => "Transcript",
        }
    }

    pub fn index(self) -> usize {
        Self::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    /// The digit key that shows the tab (1-based position).
    pub fn digit(self) -> usize {
        self.index() + 1
    }

    /// The digit and the label, as the tab bar and the help list a tab.
    pub fn numbered_title(self) -> String {
        format!("{} {}", self.digit(), self.title())
    }

    pub fn next(self) -> Self {
        Self::ALL[(self.index() + 1) % Self::ALL.len()]
    }

    pub fn prev(self) -> Self {
        Self::ALL[(self.index() + Self::ALL.len() - 1) % Self::ALL.len()]
    }

    /// Whether the tab shows the shown call's result (the tabs the "why"
    /// panel stands beside).
    pub fn is_result(self) -> bool {
        matches!(self, Tab::Text | Tab::Value | Tab::Meta | Tab::Call)
    }

    /// The tab of digit key `n` (1-based).
    pub fn from_digit(n: u32) -> Option<Self> {
        let i = usize::try_from(n).ok()?.checked_sub(1)?;
        Self::ALL.get(i).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tab_is_reached_by_its_own_digit_and_listed_with_it() {
        for (i, tab) in Tab::ALL.into_iter().enumerate() {
            assert_eq!(tab.digit(), i + 1);
            assert_eq!(Tab::from_digit(u32::try_from(i + 1).unwrap()), Some(tab));
            assert_eq!(tab.numbered_title(), format!("{} {}", i + 1, tab.title()));
        }
        assert_eq!(Tab::from_digit(0), None);
        assert_eq!(Tab::from_digit(9), None);
    }
}
