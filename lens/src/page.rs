//! What a host's cut hides of a page, in the contract's terms: whether the
//! footer and its spill locator reach the model, and for a grep page the
//! matches and files the model never sees.

use std::ops::Range;

use fs_search_engine::render::TextParts;
use serde_json::{Value, json};

use super::framing::covered;
use super::{Cut, Lens, Lensed};

/// A grep page's matches and files, and which the model does not see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrepHidden {
    pub matches: usize,
    pub matches_unseen: usize,
    pub files: usize,
    /// Files whose path line does not reach the model.
    pub files_unseen: usize,
    /// Matches the model sees without the path line they belong to.
    pub matches_without_file: usize,
}

/// What a cut hides of a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// `None`: the page has no footer.
    pub footer_visible: Option<bool>,
    /// `None`: the page has no locator.
    pub locator_visible: Option<bool>,
    /// Only for grep pages with matches.
    pub grep: Option<GrepHidden>,
}

impl Verdict {
    pub fn to_json(&self) -> Value {
        json!({
            "footerVisible": self.footer_visible,
            "locatorVisible": self.locator_visible,
            "grep": self.grep.as_ref().map(|g| json!({
                "matches": g.matches,
                "matchesUnseen": g.matches_unseen,
                "files": g.files,
                "filesUnseen": g.files_unseen,
                "matchesWithoutFile": g.matches_without_file,
            })),
        })
    }
}

/// The footer and locator of `text` when the engine's own parts are not
/// at hand (a page given as text): the last paragraph when it is one
/// parenthesised line, and the locator after its `stored at: `.
pub fn detect_parts(text: &str) -> TextParts {
    let Some(at) = text.rfind("\n\n") else {
        return TextParts::default();
    };
    let start = at + 2;
    let footer = &text[start..];
    if !(footer.starts_with('(') && footer.ends_with(')') && !footer.contains('\n')) {
        return TextParts::default();
    }
    let locator = footer.find("stored at: ").and_then(|i| {
        let from = i + "stored at: ".len();
        let len = footer[from..]
            .find(". ")
            .or_else(|| footer[from..].find(".)"))?;
        Some(start + from..start + from + len)
    });
    TextParts {
        footer: Some(start..text.len()),
        locator,
    }
}

/// What `kept` (the ranges of `text` that reach the model whole) hides of
/// the page `text` of `tool`, its footer and locator at `parts`.
pub fn verdict(tool: &str, text: &str, parts: &TextParts, kept: &[Range<usize>]) -> Verdict {
    Verdict {
        footer_visible: parts.footer.as_ref().map(|r| covered(kept, r)),
        locator_visible: parts.locator.as_ref().map(|r| covered(kept, r)),
        grep: (tool == "grep")
            .then(|| grep_hidden(text, parts, kept))
            .flatten(),
    }
}

fn grep_hidden(text: &str, parts: &TextParts, kept: &[Range<usize>]) -> Option<GrepHidden> {
    if !text.starts_with("Found ") {
        return None;
    }
    let body_end = parts
        .footer
        .as_ref()
        .map_or(text.len(), |f| f.start.saturating_sub(2));
    let header_end = text.find("\n\n")?;
    let mut hidden = GrepHidden::default();
    let mut at = header_end + 2;
    for group in text.get(at..body_end)?.split("\n\n") {
        let mut line_at = at;
        let mut path_seen = true;
        for (index, line) in group.split('\n').enumerate() {
            let range = line_at..line_at + line.len();
            let seen = covered(kept, &range);
            if index == 0 {
                hidden.files += 1;
                path_seen = seen;
                if !seen {
                    hidden.files_unseen += 1;
                }
            } else if line.starts_with("Line ") {
                hidden.matches += 1;
                if !seen {
                    hidden.matches_unseen += 1;
                } else if !path_seen {
                    hidden.matches_without_file += 1;
                }
            }
            line_at = range.end + 1;
        }
        at += group.len() + 2;
    }
    Some(hidden)
}

/// One line saying what `lens` does to the page: "codex@0.59 removes 61%
/// from the middle: 143 of 250 matches and 9 of 40 files unseen; footer
/// kept".
pub fn summary(lens: &Lens, lensed: &Lensed, verdict: &Verdict) -> String {
    let framed = lensed.framed.text().len();
    if lensed.cut == Cut::None {
        return format!(
            "{} passes the result whole ({framed} bytes framed)",
            lens.name()
        );
    }
    let percent = (lensed.removed_bytes() * 100)
        .checked_div(framed)
        .unwrap_or(0);
    let place = match lensed.cut {
        Cut::None => "",
        Cut::Middle => "from the middle",
        Cut::Head => "from the end (keeps the head)",
        Cut::HeadTail => "between head and tail",
        Cut::File => "to a file (keeps a preview)",
    };
    let mut line = format!("{} removes {percent}% {place}", lens.name());
    if let Some(grep) = &verdict.grep {
        line.push_str(&format!(
            ": {} of {} matches and {} of {} files unseen",
            grep.matches_unseen, grep.matches, grep.files_unseen, grep.files
        ));
    }
    if let Some(footer) = verdict.footer_visible {
        line.push_str(if footer {
            "; footer kept"
        } else {
            "; footer lost"
        });
    }
    if let Some(locator) = verdict.locator_visible {
        line.push_str(if locator {
            "; locator kept"
        } else {
            "; locator lost"
        });
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(range: Range<usize>) -> Vec<Range<usize>> {
        std::iter::once(range).collect()
    }

    const PAGE: &str = "Found 3 of 5 matches\n\na.rs\nLine 1: x\nLine 2: x\n\nb.rs\nLine 9: x\n\n(Full grep result stored at: /spill/g.txt. Use Read.)";

    #[test]
    fn the_footer_and_locator_of_a_page_are_found() {
        let parts = detect_parts(PAGE);
        let footer = &PAGE[parts.footer.clone().unwrap()];
        assert!(footer.starts_with("(Full grep result"));
        assert_eq!(&PAGE[parts.locator.unwrap()], "/spill/g.txt");
        assert_eq!(
            detect_parts("Found 1 match\n\na.rs\nLine 1: x"),
            TextParts::default()
        );
    }

    #[test]
    fn a_page_seen_whole_hides_nothing() {
        let parts = detect_parts(PAGE);
        let v = verdict("grep", PAGE, &parts, &one(0..PAGE.len()));
        assert_eq!(v.footer_visible, Some(true));
        assert_eq!(v.locator_visible, Some(true));
        let g = v.grep.unwrap();
        assert_eq!(
            (g.matches, g.files, g.matches_unseen, g.files_unseen),
            (3, 2, 0, 0)
        );
    }

    #[test]
    fn a_head_cut_hides_the_tail_s_matches_and_the_footer() {
        let parts = detect_parts(PAGE);
        let end = PAGE.find("\n\nb.rs").unwrap();
        let v = verdict("grep", PAGE, &parts, &one(0..end));
        assert_eq!(v.footer_visible, Some(false));
        let g = v.grep.unwrap();
        assert_eq!((g.matches_unseen, g.files_unseen), (1, 1));
    }

    #[test]
    fn a_middle_cut_can_leave_matches_without_their_file() {
        let parts = detect_parts(PAGE);
        let tail = PAGE.find("Line 2").unwrap();
        let v = verdict("grep", PAGE, &parts, &[0..10, tail..PAGE.len()]);
        let g = v.grep.unwrap();
        assert_eq!(g.files_unseen, 1);
        assert_eq!(g.matches_unseen, 1);
        assert_eq!(g.matches_without_file, 1);
    }
}
