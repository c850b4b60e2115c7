//! What the panes and the overlay show, composed from the state as
//! [`Doc`]s: the documents of a finished call ([`result`]), of the plugin
//! ([`surface`]) and the help ([`help`]) — a call read from a followed
//! recording shows what the recording keeps, and says what it does not; [`tab_doc`] picks the one a tab
//! shows ([`lens`]: the Text tab through the session's host lens). Both the update logic (to clamp scrolling) and the views (to
//! draw) read documents through here.

pub(crate) mod help;
pub(crate) mod lens;
pub(crate) mod result;
pub(crate) mod surface;

use self::result::CallFacts;
use super::scroll_doc::Doc;
use super::state::State;
use super::state::calls::{CallRecord, CallResult};
use super::tabs::Tab;

/// The document of `tab` for a finished call, if the tab shows one
/// (built on first view, then kept with the call).
pub(crate) fn record_doc<'a>(
    record: &'a CallRecord,
    tab: Tab,
    session_id: &str,
) -> Option<&'a Doc> {
    let docs = &record.docs;
    let (result, commands) = match &record.result {
        CallResult::Ran {
            result, commands, ..
        } => (result, commands),
        CallResult::Recorded { recorded, .. } => {
            return Some(match tab {
                Tab::Text => docs
                    .text
                    .get_or_init(|| result::recorded_text_doc(recorded)),
                Tab::Value => docs.value.get_or_init(|| {
                    result::not_recorded_doc(
                        "canonical value",
                        "the engine's value behind the text",
                    )
                }),
                Tab::Meta => docs.meta.get_or_init(|| {
                    result::not_recorded_doc(
                        "presentation meta",
                        "the search card a host's UI shows",
                    )
                }),
                Tab::Call => docs.details.get_or_init(|| {
                    result::recorded_details_doc(
                        &record.call_id,
                        &record.tool,
                        &record.args,
                        &record.config,
                        recorded,
                    )
                }),
                _ => return None,
            });
        }
    };
    Some(match tab {
        Tab::Text => docs.text.get_or_init(|| result::text_doc(result)),
        Tab::Value => docs.value.get_or_init(|| {
            result::json_doc(
                result.value.as_ref(),
                "null — no canonical value (only successes carry one)",
            )
        }),
        Tab::Meta => docs
            .meta
            .get_or_init(|| result::meta_doc(result, &record.config)),
        Tab::Call => docs.details.get_or_init(|| {
            result::details_doc(&CallFacts {
                id: record.id,
                call_id: &record.call_id,
                session_id,
                tool: &record.tool,
                args: &record.args,
                config: &record.config,
                duration_ms: record.duration_ms().unwrap_or_default(),
                result,
                commands,
            })
        }),
        _ => return None,
    })
}

/// The document `tab` shows now, if it is a document tab.
pub(crate) fn tab_doc(state: &State, tab: Tab) -> Option<&Doc> {
    match tab {
        Tab::Surface => Some(&state.surface),
        Tab::Config | Tab::History | Tab::Transcript => None,
        _ => match state.shown_record() {
            Some(record) => match (tab, state.lens_for(record)) {
                (Tab::Text, Some(lens)) => lens::lensed_page(record, lens).map(|page| &page.doc),
                _ => record_doc(record, tab, &state.session.session_id),
            },
            None => Some(&state.welcome),
        },
    }
}
