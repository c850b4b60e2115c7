//! The Text tab's host lens: what a call's page becomes
//! through an agent host's lens, kept with the call once built. Plain
//! data: `content::lens` builds it, `App` chooses the session's lens
//! (`State::lens`) and counts the lensed text's tokens.

use crate::interactive::scroll_doc::Doc;

/// A call's page through one lens.
#[derive(Debug)]
pub struct LensedPage {
    /// The one-line verdict (`fs_search_lens::page_summary`).
    pub summary: String,
    /// Exactly what the host's model receives.
    pub text: String,
    /// The Text tab's document: the verdict, the lens's notes, then the
    /// lensed text, numbered, with a marker line where each cut falls.
    pub doc: Doc,
}
