//! The abort signal of a call that came over HTTP: the HTTP layer puts a
//! [`CallAbort`] in each request's extensions and cancels it when the
//! client goes away; the handler reads it back with [`call_abort`].

use tokio_util::sync::CancellationToken;

/// The abort signal of one HTTP request, put in its extensions (rmcp
/// hands them to the handler as `http::request::Parts`).
#[derive(Clone)]
pub(crate) struct CallAbort(CancellationToken);

impl CallAbort {
    /// The abort signal `token` of one request.
    pub(crate) fn new(token: CancellationToken) -> Self {
        Self(token)
    }
}

/// The abort signal of the HTTP request a call came in, if it came over
/// HTTP.
pub(crate) fn call_abort(extensions: &rmcp::model::Extensions) -> Option<CancellationToken> {
    extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<CallAbort>()
        .map(|abort| abort.0.clone())
}
