//! The Text tab's host lens, `impl App`: `L` cycles the
//! session's lens (none, then each host's newest lens in
//! `fs_search_lens::hosts()` order, then none again); [`App::set_lens`] is
//! the one way the lens is set, so a caller can pick one by default (the
//! lens of a recorded client, say); the shown call's page through the lens
//! has its tokens counted as the page's own are.

use fs_search_lens::{Lens, hosts, resolve};

use super::App;
use crate::interactive::content;
use crate::interactive::state::tokens::TokenizerStatus;
use crate::interactive::tabs::Tab;

impl App {
    /// Shows the Text tab through `lens` from now on, for the shown call
    /// and every later one (`None`: the page as the tool returns it).
    pub fn set_lens(&mut self, lens: Option<&'static Lens>) {
        self.state.lens = lens;
        self.state.lens_chosen = true;
        // The verdict is on the first row.
        self.state.set_scroll(Tab::Text, 0);
        self.count_lensed();
    }

    /// `L`: the next lens of the cycle.
    pub(super) fn cycle_lens(&mut self) {
        self.set_lens(next_lens(self.state.shown_lens()));
    }

    /// Counts the tokens of the shown call's page through the lens (once
    /// per call and lens; nothing before the tokenizer is ready).
    pub(super) fn count_lensed(&mut self) {
        let Some(lens) = self.state.shown_lens() else {
            return;
        };
        let TokenizerStatus::Ready(shared) = &self.state.tokens.tokenizer else {
            return;
        };
        let (Some(record), Some(index)) =
            (self.state.shown_record(), content::lens::lens_index(lens))
        else {
            return;
        };
        let key = (record.id, index);
        if self.state.tokens.lensed.contains_key(&key) {
            return;
        }
        let Some(page) = content::lens::lensed_page(record, lens) else {
            return;
        };
        let count = shared.0.count(&page.text);
        self.state.tokens.lensed.insert(key, count);
    }
}

/// The lens after `current` in the cycle: the first host's newest lens
/// after none, the next host's after a host's (any era of it), none after
/// the last host's.
pub(super) fn next_lens(current: Option<&Lens>) -> Option<&'static Lens> {
    let hosts = hosts();
    let next = match current {
        None => hosts.first(),
        Some(lens) => hosts
            .iter()
            .position(|host| *host == lens.host)
            .and_then(|i| hosts.get(i + 1)),
    };
    next.and_then(|host| resolve(host).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_is_none_then_each_hosts_newest_lens_then_none() {
        let mut names = Vec::new();
        let mut lens = next_lens(None);
        while let Some(current) = lens {
            names.push(current.name());
            lens = next_lens(Some(current));
        }
        let newest: Vec<String> = hosts()
            .into_iter()
            .map(|host| resolve(host).unwrap().name())
            .collect();
        assert_eq!(names, newest);
        assert_eq!(names.first().map(String::as_str), Some("codex@0.120"));
    }

    #[test]
    fn an_older_era_moves_on_to_the_next_host() {
        let old = resolve("codex@0.56").unwrap();
        let next = next_lens(Some(old)).unwrap();
        assert_eq!(next.host, hosts()[1]);
    }
}
