//! Which protocol era an incoming message belongs to, read from the message
//! itself, so both transports sort it the same way:
//!
//! - [`Era::Sessions`]: the 2025 revisions (2025-06-18, 2025-11-25), where
//!   `initialize` opens a session and requests carry no protocol metadata;
//! - [`Era::Stateless`]: 2026-07-28, where there is no handshake and every
//!   request names its protocol version and client capabilities in
//!   `params._meta` (`io.modelcontextprotocol/protocolVersion`,
//!   `…/clientCapabilities`, optionally `…/clientInfo` and `…/logLevel`), and
//!   `server/discover` tells a client what the server speaks.
//!
//! A request is stateless when its `_meta` carries the protocol-version key
//! (whatever its value: an unsupported one is answered with the error that
//! lists the supported versions) or when it is `server/discover`. The
//! methods 2026-07-28 removed (`initialize`, `ping`, `logging/setLevel`,
//! `resources/subscribe`, `resources/unsubscribe`) sent as stateless
//! requests get "Method not found" (`-32601`; HTTP 404) from
//! [`super::message::read`], before their 2025 params would be read.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion};
use serde_json::{Map, Value};

/// The `_meta` key naming a request's protocol version.
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The method a 2026-07-28 client asks what the server speaks with.
pub(crate) const DISCOVER: &str = "server/discover";

/// The methods 2026-07-28 removed.
const REMOVED: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The protocol era of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2025-06-18 or 2025-11-25: sessions opened by `initialize`.
    Sessions,
    /// 2026-07-28: stateless requests with their protocol in `_meta`.
    Stateless,
}

/// The era of a message object (as parsed, before it is typed).
pub(crate) fn of(message: &Map<String, Value>) -> Era {
    let method = message.get("method").and_then(Value::as_str);
    let names_version = message
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
        .is_some();
    if names_version || method == Some(DISCOVER) {
        Era::Stateless
    } else {
        Era::Sessions
    }
}

/// The era of a message as typed (as [`of`] sorts it).
pub(crate) fn of_message(message: &ClientJsonRpcMessage) -> Era {
    let JsonRpcMessage::Request(request) = message else {
        return Era::Sessions;
    };
    let discover = matches!(request.request, ClientRequest::DiscoverRequest(_));
    let names_version = request
        .request
        .get_meta()
        .0
        .0
        .contains_key(PROTOCOL_VERSION_KEY);
    if discover || names_version {
        Era::Stateless
    } else {
        Era::Sessions
    }
}

/// Whether `version` is the stateless revision or a later one (dates compare
/// as text).
pub(crate) fn is_stateless_version(version: &ProtocolVersion) -> bool {
    version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
}

/// The method of a stateless request for a method 2026-07-28 removed
/// (answered "Method not found", see [`super::message`]); none otherwise.
pub(crate) fn removed_method(message: &Map<String, Value>) -> Option<&str> {
    if of(message) != Era::Stateless || !message.contains_key("id") {
        return None;
    }
    let method = message.get("method").and_then(Value::as_str)?;
    REMOVED.contains(&method).then_some(method)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_request_naming_its_version_in_meta_or_discover_is_stateless() {
        let meta = json!({"jsonrpc":"2.0","id":1,"method":"tools/list",
            "params":{"_meta":{PROTOCOL_VERSION_KEY:"v999"}}});
        assert_eq!(of(&map(meta)), Era::Stateless);
        let discover = json!({"jsonrpc":"2.0","id":1,"method":"server/discover"});
        assert_eq!(of(&map(discover)), Era::Stateless);
        let plain = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}});
        assert_eq!(of(&map(plain)), Era::Sessions);
    }

    #[test]
    fn removed_methods_sent_stateless_are_named_and_not_in_a_session() {
        let stateless = json!({"jsonrpc":"2.0","id":7,"method":"logging/setLevel",
            "params":{"_meta":{PROTOCOL_VERSION_KEY:"2026-07-28"}}});
        assert_eq!(removed_method(&map(stateless)), Some("logging/setLevel"));
        let in_session = json!({"jsonrpc":"2.0","id":7,"method":"logging/setLevel",
            "params":{"level":"info"}});
        assert!(removed_method(&map(in_session)).is_none());
        let kept = json!({"jsonrpc":"2.0","id":7,"method":"tools/list",
            "params":{"_meta":{PROTOCOL_VERSION_KEY:"2026-07-28"}}});
        assert!(removed_method(&map(kept)).is_none());
    }
}
