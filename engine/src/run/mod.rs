//! Running the fixed rg command through the bash seam: the shared run
//! pipeline ([`pipeline`]), the sinks that parse rg's stdout while it is
//! written ([`stream`]), and the classification of an rg exit outside
//! {0, 1} ([`classify`]).

pub(crate) mod classify;
pub(crate) mod pipeline;
pub(crate) mod stream;
