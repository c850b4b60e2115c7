//! One reading of an incoming JSON-RPC message, shared by both transports
//! (a line on stdin, a POST body over HTTP), so the same text gets the
//! same answer whichever way it came:
//!
//! - the text is parsed as `JSON.parse` reads it ([`fs_search_engine::json`]: a lone
//!   surrogate escape becomes U+FFFD, nesting up to
//!   [`fs_search_engine::json::MAX_DEPTH`] levels), so hostile arguments reach the
//!   engine and get its result;
//! - text that is not JSON gets a parse error (`-32700`, id null);
//! - JSON that is not one message object (a batch, a number) gets Invalid
//!   Request (`-32600`, id null), as does a request whose `id` is not a
//!   string or an integer JSON-RPC can carry (null, fractional, an object,
//!   beyond 64 bits): JSON-RPC 2.0 answers it with id null, never silence;
//! - a known request with malformed params gets `-32602` with its id;
//! - a 2026-07-28 request for a method that revision removed gets
//!   `-32601` ([`super::era::removed_method`]);
//! - a notification, or a response to nothing, that cannot be read is
//!   dropped without an answer (JSON-RPC never answers a notification).

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::{Map, Value, json};

/// JSON-RPC error codes.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;

/// What one incoming text is.
pub(crate) enum Read {
    /// A message the server serves.
    Message(Box<ClientJsonRpcMessage>),
    /// A message answered with an error and served no further.
    Refused(ErrorAnswer),
    /// Unusable, and not a request: no answer.
    Ignored,
}

/// The JSON-RPC error answer to an unusable message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ErrorAnswer {
    /// The request's id, or null when it has none usable.
    pub id: Value,
    pub code: i64,
    pub message: String,
}

impl ErrorAnswer {
    pub(crate) fn new(id: Value, code: i64, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: message.into(),
        }
    }

    /// The error response as one JSON text.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        })
        .to_string()
        .into_bytes()
    }
}

/// The MCP requests this server knows by name: rmcp reads one whose params
/// do not fit as a custom request (and would answer "method not found").
const KNOWN_METHODS: [&str; 13] = [
    "initialize",
    "ping",
    "tools/call",
    "tools/list",
    "logging/setLevel",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
];

/// Whether `id` is one JSON-RPC (and rmcp) can carry: a string or an
/// integer within 64 signed bits.
fn is_usable_id(id: &Value) -> bool {
    id.is_string() || id.is_i64()
}

/// Reads one message text (a line without its newline, or a POST body).
pub(crate) fn read(text: &[u8]) -> Read {
    let value = match fs_search_engine::json::parse_slice(text) {
        Ok(value) => value,
        Err(e) => {
            tracing::warn!("a message that is not JSON: {e}");
            let message = match e {
                fs_search_engine::json::JsonError::TooDeep => format!("Parse error: {e}"),
                fs_search_engine::json::JsonError::Syntax(_) => "Parse error".to_owned(),
            };
            return Read::Refused(ErrorAnswer::new(Value::Null, PARSE_ERROR, message));
        }
    };
    let Value::Object(map) = value else {
        return Read::Refused(ErrorAnswer::new(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a message is one JSON object (batches are not supported)",
        ));
    };
    let shape = Shape::of(&map);
    if shape.method.is_some()
        && let Some(id) = &shape.id
        && !is_usable_id(id)
    {
        return Read::Refused(ErrorAnswer::new(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: id must be a string or an integer of at most 64 bits",
        ));
    }
    if let Some(method) = super::era::removed_method(&map) {
        return Read::Refused(ErrorAnswer::new(
            map.get("id").cloned().unwrap_or(Value::Null),
            METHOD_NOT_FOUND,
            format!("Method not found: {method} (removed in 2026-07-28)"),
        ));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(map)) {
        Ok(message) => match malformed_known_request(&message) {
            Some(answer) => Read::Refused(answer),
            None => Read::Message(Box::new(message)),
        },
        Err(e) => {
            tracing::debug!("an unusable message: {e}");
            shape.answer()
        }
    }
}

/// The parts of a message object that decide its answer.
struct Shape {
    id: Option<Value>,
    method: Option<String>,
    is_response: bool,
}

impl Shape {
    fn of(map: &Map<String, Value>) -> Self {
        Self {
            id: map.get("id").cloned(),
            method: map.get("method").and_then(Value::as_str).map(str::to_owned),
            is_response: map.contains_key("result") || map.contains_key("error"),
        }
    }

    /// The answer to a message of this shape that could not be read.
    fn answer(self) -> Read {
        let id = self.id.filter(is_usable_id);
        match (id, self.method) {
            // A notification (or a response to nothing) gets no answer.
            (None, Some(_)) => Read::Ignored,
            (_, None) if self.is_response => Read::Ignored,
            (Some(id), Some(method)) => Read::Refused(ErrorAnswer::new(
                id,
                INVALID_PARAMS,
                format!("Invalid params for {method}"),
            )),
            (id, None) => Read::Refused(ErrorAnswer::new(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "Invalid Request",
            )),
        }
    }
}

/// The `-32602` answer to a known request with malformed params.
fn malformed_known_request(message: &ClientJsonRpcMessage) -> Option<ErrorAnswer> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CustomRequest(custom) = &request.request else {
        return None;
    };
    if !KNOWN_METHODS.contains(&custom.method.as_str()) {
        return None;
    }
    let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
    Some(ErrorAnswer::new(
        id,
        INVALID_PARAMS,
        format!("Invalid params for {}", custom.method),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> Option<ErrorAnswer> {
        match read(text.as_bytes()) {
            Read::Refused(answer) => Some(answer),
            _ => None,
        }
    }

    #[test]
    fn bad_messages_get_the_json_rpc_error_they_deserve() {
        let not_json = answer("{not json").unwrap();
        assert_eq!((not_json.id, not_json.code), (Value::Null, PARSE_ERROR));
        assert_eq!(answer("[1,2]").unwrap().code, INVALID_REQUEST);
        let bad = answer(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":1}}"#)
            .unwrap();
        assert_eq!((bad.id, bad.code), (json!(7), INVALID_PARAMS));
        assert!(matches!(
            read(br#"{"jsonrpc":"2.0","method":"x/y","params":1}"#),
            Read::Ignored
        ));
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":"a"}"#).unwrap().id,
            json!("a")
        );
    }

    #[test]
    fn a_request_whose_id_json_rpc_cannot_carry_gets_invalid_request_with_id_null() {
        for id in [
            "null",
            "1.5",
            "{\"a\":1}",
            "[1]",
            "true",
            "1208925819614629174706176",
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let answer = answer(&text).unwrap_or_else(|| panic!("no answer for id {id}"));
            assert_eq!(
                (answer.id, answer.code),
                (Value::Null, INVALID_REQUEST),
                "{id}"
            );
        }
    }

    #[test]
    fn a_lone_surrogate_and_deep_nesting_in_the_arguments_are_read() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"grep","arguments":{{"pattern":"\ud800","x":{deep}}}}}}}"#
        );
        let Read::Message(message) = read(text.as_bytes()) else {
            panic!("not read");
        };
        let JsonRpcMessage::Request(request) = *message else {
            panic!("not a request");
        };
        let ClientRequest::CallToolRequest(call) = request.request else {
            panic!("not a call");
        };
        let args = call.params.arguments.unwrap();
        assert_eq!(args["pattern"], "\u{fffd}");
    }
}
