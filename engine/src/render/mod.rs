//! What a call shows: the model-visible page and its parts ([`Page`],
//! [`TextParts`]), the card a host draws from it ([`SearchMeta`]), and how
//! much of the tree a glob page covers ([`GlobCoverage`]). The text itself
//! is made in `text`; the pure renderers are exported for tests through
//! the `helpers` feature.

pub(crate) mod coverage;
pub(crate) mod meta;
pub(crate) mod page;
pub(crate) mod present;
pub(crate) mod sample;
pub(crate) mod sample_levels;
pub(crate) mod text;

pub use coverage::{COVERAGE_DEPTHS, DepthCoverage, GlobCoverage, glob_page_coverage};
pub use meta::{CardFile, CardLine, SearchMeta};
pub use page::{Page, TextParts};

pub(crate) use text::{
    GlobPage, Rendered, SpillSlot, glob_page, glob_spill_pieces, grep_spill_pieces, group_by_file,
    preview_matches, render_glob, render_glob_page, render_grep, render_grep_page,
};
