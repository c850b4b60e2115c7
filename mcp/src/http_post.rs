//! The one place that reads and classifies a POST to `/mcp`: the body is
//! read once (bounded in size and time), parsed by the reader stdio uses
//! ([`super::message::read`]), and sorted by protocol era
//! ([`super::era`]). Anything unusable is answered here with HTTP 400 (404
//! for a method 2026-07-28 removed) and a JSON-RPC error body; what is
//! served goes on to rmcp as a copy it can parse, with the message read
//! here in a [`super::sessions::Stash`].
//!
//! - The 2025 revisions (2025-06-18, 2025-11-25) need a session: only an
//!   `initialize` may come without `Mcp-Session-Id`.
//! - A 2026-07-28 request (its protocol version in `_meta`, or
//!   `server/discover`, or an `MCP-Protocol-Version` header of 2026-07-28) is [`Post::Stateless`]: rmcp serves it without a session,
//!   checking its `_meta` keys, its version (an unsupported one gets the
//!   error listing the supported versions) and its `Mcp-Method`/`Mcp-Name`
//!   headers against the body. Such a request inside a 2025 session is
//!   refused: a session keeps the revision it negotiated.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use http_body::Body;
use http_body_util::BodyExt;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ProtocolVersion};
use serde_json::Value;
use thiserror::Error;

use super::era::{self, Era};
use super::message::{self, ErrorAnswer, INVALID_REQUEST, Read};

/// The protocol header (lowercase, as hyper keeps header names).
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// The revisions a request may name in `MCP-Protocol-Version` in a
/// session (the server negotiates 2025-06-18 or 2025-11-25; older clients
/// may still name theirs).
const SESSION_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Nesting kept in the copy rmcp parses (serde_json stops at 128); the
/// handler gets the message as read, whatever its depth.
pub(crate) const COPY_DEPTH: usize = 64;

/// Why a body could not be read.
#[derive(Debug, Error)]
pub(crate) enum BodyError {
    #[error("Payload Too Large: a request body is at most 8 MiB")]
    TooLarge,
    #[error("Request Timeout: the request body did not arrive within {0:?}")]
    TimedOut(Duration),
    #[error("Bad Request: the request body could not be read: {0}")]
    Broken(String),
}

/// Reads the whole body: at most `limit` bytes, within `timeout`.
pub(crate) async fn read_body<B>(
    body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let read = async {
        let mut body = body;
        let mut collected = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| BodyError::Broken(e.to_string()))?;
            if let Ok(data) = frame.into_data() {
                if data.len() > limit.saturating_sub(collected.len()) {
                    return Err(BodyError::TooLarge);
                }
                collected.extend_from_slice(&data);
            }
        }
        Ok(collected.freeze())
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(BodyError::TimedOut(timeout)))
}

/// What a POST is, once read.
pub(crate) enum Post {
    /// An `initialize` without a session: a new session.
    Initialize(Box<ClientJsonRpcMessage>),
    /// A message of the session named in `Mcp-Session-Id`.
    InSession(Box<ClientJsonRpcMessage>),
    /// A 2026-07-28 message: served without a session.
    Stateless(Box<ClientJsonRpcMessage>),
    /// Answered with HTTP 400 and this JSON-RPC error.
    Refused(ErrorAnswer),
}

/// Reads and classifies a POST body; `in_session` when the request names
/// a (live) session.
pub(crate) fn classify(body: &[u8], headers: &HeaderMap, in_session: bool) -> Post {
    let message = match message::read(body) {
        Read::Message(message) => message,
        Read::Refused(answer) => return Post::Refused(answer),
        Read::Ignored => {
            return Post::Refused(ErrorAnswer::new(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: an unreadable notification or response",
            ));
        }
    };
    let id = request_id(&message);
    let header = headers
        .get(PROTOCOL_HEADER)
        .map(|v| v.to_str().unwrap_or(""));
    let stateless = era::of_message(&message) == Era::Stateless
        || header == Some(ProtocolVersion::V_2026_07_28.as_str());
    if stateless {
        if in_session {
            return Post::Refused(ErrorAnswer::new(
                id,
                INVALID_REQUEST,
                "Bad Request: a session keeps the revision it negotiated (2025-06-18 or 2025-11-25); send 2026-07-28 requests without Mcp-Session-Id",
            ));
        }
        return Post::Stateless(message);
    }
    if let Some(version) = header
        && !SESSION_REVISIONS.contains(&version)
    {
        return Post::Refused(ErrorAnswer::new(
            id,
            INVALID_REQUEST,
            format!(
                "Bad Request: unsupported MCP-Protocol-Version {version:?}; this server speaks 2025-06-18 and 2025-11-25 (with sessions) and 2026-07-28"
            ),
        ));
    }
    let is_initialize = matches!(
        message.as_ref(),
        JsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::InitializeRequest(_))
    );
    match (in_session, is_initialize) {
        (true, _) => Post::InSession(message),
        (false, true) => Post::Initialize(message),
        (false, false) => Post::Refused(ErrorAnswer::new(
            id,
            INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id required; send initialize first (the 2025 protocol revisions need a session)",
        )),
    }
}

/// The id of a request (null for anything else).
fn request_id(message: &ClientJsonRpcMessage) -> Value {
    match message {
        JsonRpcMessage::Request(request) => {
            serde_json::to_value(&request.id).unwrap_or(Value::Null)
        }
        _ => Value::Null,
    }
}

/// The text rmcp parses for `message`: the same message with nesting
/// beyond [`COPY_DEPTH`] cut (rmcp's parser stops at 128 levels); the
/// handler gets the message itself (see [`super::sessions`]).
pub(crate) fn copy_for_rmcp(message: &ClientJsonRpcMessage) -> Result<Bytes, serde_json::Error> {
    let mut value = serde_json::to_value(message)?;
    cut(&mut value, COPY_DEPTH);
    Ok(Bytes::from(serde_json::to_vec(&value)?))
}

/// Replaces what nests deeper than `depth` with null.
fn cut(value: &mut Value, depth: usize) {
    if !(value.is_array() || value.is_object()) {
        return;
    }
    if depth == 0 {
        *value = Value::Null;
        return;
    }
    match value {
        Value::Array(items) => items.iter_mut().for_each(|v| cut(v, depth - 1)),
        Value::Object(map) => map.values_mut().for_each(|v| cut(v, depth - 1)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_for_rmcp_cuts_nesting_that_serde_json_would_refuse() {
        let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"grep","arguments":{{"pattern":"x","deep":{deep}}}}}}}"#
        );
        let Read::Message(message) = message::read(text.as_bytes()) else {
            panic!("not read");
        };
        let copy = copy_for_rmcp(&message).unwrap();
        let parsed: ClientJsonRpcMessage = serde_json::from_slice(&copy).unwrap();
        assert!(matches!(parsed, JsonRpcMessage::Request(_)));
    }
}
