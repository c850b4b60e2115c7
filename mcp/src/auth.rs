//! Who may talk to `workbench mcp --listen`: the checks every HTTP request
//! passes before it reaches the MCP layer, in this order.
//!
//! 1. `Host` (DNS-rebinding protection, MCP transport "Security Warning"):
//!    when the server listens on a loopback address, or `--allow-host` is
//!    given, the `Host` header must name a loopback host (`localhost`,
//!    `127.0.0.0/8`, `::1`), the address listened on, or an `--allow-host`
//!    entry; anything else gets 403. Elsewhere the bearer token guards.
//! 2. `Origin`: a request that carries one (a browser's) must come from a
//!    loopback origin or one given with `--allow-origin`; anything else,
//!    `null` and malformed values included, gets 403. Requests without an
//!    `Origin` (agents, curl) pass.
//! 3. The bearer token, when one is configured (`--token-file FILE`, else
//!    `$WORKBENCH_MCP_TOKEN`): a missing or wrong `Authorization: Bearer`
//!    gets 401 with `WWW-Authenticate: Bearer`. Tokens are compared as
//!    SHA-256 digests with a fold over all their bytes, so the time taken
//!    does not depend on where they differ.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use http::{HeaderMap, StatusCode, header};
use sha2::{Digest, Sha256};
use thiserror::Error;

/// The environment variable holding the token when no file is given.
pub(crate) const TOKEN_ENV: &str = "WORKBENCH_MCP_TOKEN";

/// A configuration the server refuses to start with (exit 2).
#[derive(Debug, Error)]
pub(crate) enum GateError {
    #[error("--token-file {}: {source}", path.display())]
    TokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{0}: the token is empty or has whitespace or control characters inside (one line of visible ASCII)"
    )]
    BadToken(String),
    #[error("--allow-origin {0}: not an origin (scheme://host[:port], or null)")]
    BadOrigin(String),
    #[error("--allow-host {0}: not a host (name or name:port)")]
    BadHost(String),
    #[error(
        "refusing to listen on {0} without a token: anyone who reaches it could search the workdir. Give --token-file FILE (or set {TOKEN_ENV}), or listen on 127.0.0.1"
    )]
    NoToken(SocketAddr),
}

/// The bearer token, kept as its digest.
pub(crate) struct Token {
    digest: [u8; 32],
}

impl Token {
    fn new(secret: &str) -> Self {
        Self {
            digest: Sha256::digest(secret.as_bytes()).into(),
        }
    }

    /// The token from `file`, else from `$WORKBENCH_MCP_TOKEN`; none when
    /// neither is given (an empty variable counts as unset). The file is
    /// read as `fs_search_process`'s `bounded` reads: a regular file (a FIFO is refused
    /// at once), at most [`fs_search_process::TOKEN_FILE_MAX_BYTES`].
    pub(crate) fn configured(file: Option<&Path>) -> Result<Configured, GateError> {
        let (secret, origin, warning) = match file {
            Some(path) => (
                fs_search_process::read_text(path, fs_search_process::TOKEN_FILE_MAX_BYTES)
                    .map_err(|source| GateError::TokenFile {
                        path: path.to_path_buf(),
                        source,
                    })?,
                format!("--token-file {}", path.display()),
                readable_by_others(path),
            ),
            None => match std::env::var(TOKEN_ENV) {
                Ok(secret) if !secret.is_empty() => (secret, format!("${TOKEN_ENV}"), None),
                _ => {
                    return Ok(Configured {
                        token: None,
                        warning: None,
                    });
                }
            },
        };
        let secret = secret.trim();
        if secret.is_empty() || !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(GateError::BadToken(origin));
        }
        Ok(Configured {
            token: Some(Self::new(secret)),
            warning,
        })
    }

    /// Whether `headers` carry `Authorization: Bearer <this token>`.
    pub(crate) fn accepts(&self, headers: &HeaderMap) -> bool {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return false;
        };
        let value = value.as_bytes();
        let Some((scheme, given)) = value.split_at_checked(7) else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case(b"bearer ") {
            return false;
        }
        let given: [u8; 32] = Sha256::digest(given.trim_ascii()).into();
        same_digest(&given, &self.digest)
    }
}

/// The configured token, and a warning about where it came from.
pub(crate) struct Configured {
    /// The token; none when no token is configured.
    pub token: Option<Token>,
    /// Set when the token file is readable by users other than its owner
    /// (the server still starts; the operator should be told).
    pub warning: Option<String>,
}

/// A warning when users other than the owner may read `path`.
fn readable_by_others(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    (meta.permissions().mode() & 0o044 != 0).then(|| {
        format!(
            "--token-file {}: readable by other users (chmod 600 it)",
            path.display()
        )
    })
}

/// Equal digests, in time independent of their contents.
fn same_digest(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// An origin: scheme, host (lowercase, no brackets) and port (explicit or
/// the scheme's default).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

fn parse_origin(value: &str) -> Option<Origin> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("null") {
        return Some(Origin::Null);
    }
    let uri: http::Uri = value.parse().ok()?;
    // An origin is scheme://authority and nothing else.
    if uri.path_and_query().is_some_and(|p| p.as_str() != "/") || value.ends_with('/') {
        return None;
    }
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    if authority.as_str().contains('@') {
        return None;
    }
    Some(Origin::Tuple {
        port: authority.port_u16().or_else(|| default_port(&scheme)),
        host: normal_host(authority.host()),
        scheme,
    })
}

fn normal_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// `localhost` (and its subdomains), `127.0.0.0/8`, `::1`.
fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A `Host` the server answers to: a name and, optionally, a port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostRule {
    host: String,
    port: Option<u16>,
}

fn parse_host(value: &str) -> Option<HostRule> {
    let authority: http::uri::Authority = value.trim().parse().ok()?;
    if authority.as_str().contains('@') {
        return None;
    }
    Some(HostRule {
        host: normal_host(authority.host()),
        port: authority.port_u16(),
    })
}

/// Why a request is turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub status: StatusCode,
    pub message: &'static str,
}

impl Refusal {
    fn new(status: StatusCode, message: &'static str) -> Self {
        Self { status, message }
    }

    /// 401s carry `WWW-Authenticate: Bearer`.
    pub(crate) fn challenge(&self) -> Option<&'static str> {
        (self.status == StatusCode::UNAUTHORIZED).then_some("Bearer realm=\"workbench mcp\"")
    }
}

/// The checks of one server.
pub(crate) struct Gate {
    token: Option<Token>,
    origins: Vec<Origin>,
    /// `None`: `Host` is not checked.
    hosts: Option<Vec<HostRule>>,
}

impl Gate {
    /// The gate of a server listening on `listen`; refuses a non-loopback
    /// address without a token.
    pub(crate) fn new(
        listen: SocketAddr,
        token: Option<Token>,
        allow_origins: &[String],
        allow_hosts: &[String],
    ) -> Result<Self, GateError> {
        if token.is_none() && !listen.ip().is_loopback() {
            return Err(GateError::NoToken(listen));
        }
        let origins = allow_origins
            .iter()
            .map(|o| parse_origin(o).ok_or_else(|| GateError::BadOrigin(o.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        let mut extra = allow_hosts
            .iter()
            .map(|h| parse_host(h).ok_or_else(|| GateError::BadHost(h.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        let hosts = (listen.ip().is_loopback() || !extra.is_empty()).then(|| {
            if !listen.ip().is_unspecified() {
                extra.push(HostRule {
                    host: listen.ip().to_string(),
                    port: None,
                });
            }
            extra
        });
        Ok(Self {
            token,
            origins,
            hosts,
        })
    }

    /// Whether a token is required.
    pub(crate) fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// The request's headers pass, or why not.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        self.check_host(headers)?;
        self.check_origin(headers)?;
        match &self.token {
            Some(token) if !token.accepts(headers) => Err(Refusal::new(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: send Authorization: Bearer <token>",
            )),
            _ => Ok(()),
        }
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let Some(allowed) = &self.hosts else {
            return Ok(());
        };
        let mut values = headers.get_all(header::HOST).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "Bad Request: one Host header is required",
            ));
        };
        let host =
            value.to_str().ok().and_then(parse_host).ok_or_else(|| {
                Refusal::new(StatusCode::BAD_REQUEST, "Bad Request: malformed Host")
            })?;
        let ok = is_loopback_host(&host.host)
            || allowed
                .iter()
                .any(|a| a.host == host.host && a.port.is_none_or(|p| host.port == Some(p)));
        forbidden_unless(ok, "Host", value, "Forbidden: Host is not allowed")
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let mut values = headers.get_all(header::ORIGIN).iter();
        let Some(value) = values.next() else {
            return Ok(());
        };
        let origin = value.to_str().ok().and_then(parse_origin);
        let ok = values.next().is_none()
            && match &origin {
                Some(Origin::Tuple { host, .. }) if is_loopback_host(host) => true,
                Some(origin) => self.origins.contains(origin),
                None => false,
            };
        forbidden_unless(ok, "Origin", value, "Forbidden: Origin is not allowed")
    }
}

/// 403 (logged) unless `ok`.
fn forbidden_unless(
    ok: bool,
    header: &str,
    value: &http::HeaderValue,
    message: &'static str,
) -> Result<(), Refusal> {
    if ok {
        return Ok(());
    }
    tracing::warn!(
        ?value,
        "refused a request for its {header} (DNS rebinding?)"
    );
    Err(Refusal::new(StatusCode::FORBIDDEN, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn status(gate: &Gate, pairs: &[(&str, &str)]) -> u16 {
        match gate.check(&headers(pairs)) {
            Ok(()) => 200,
            Err(r) => r.status.as_u16(),
        }
    }

    fn loopback(origins: &[&str]) -> Gate {
        let origins: Vec<String> = origins.iter().map(|s| s.to_string()).collect();
        Gate::new(
            "127.0.0.1:8080".parse().unwrap(),
            Some(Token::new("s3cret")),
            &origins,
            &[],
        )
        .unwrap()
    }

    #[test]
    fn the_token_is_required_and_compared_whole() {
        let gate = loopback(&[]);
        let host = ("host", "127.0.0.1:8080");
        assert_eq!(status(&gate, &[host]), 401);
        assert_eq!(
            status(&gate, &[host, ("authorization", "Bearer s3cret")]),
            200
        );
        assert_eq!(
            status(&gate, &[host, ("authorization", "bearer  s3cret ")]),
            200
        );
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret2",
            "Basic s3cret",
            "Bearer",
            "s3cret",
            "",
        ] {
            assert_eq!(
                status(&gate, &[host, ("authorization", wrong)]),
                401,
                "{wrong}"
            );
        }
        let two = [
            host,
            ("authorization", "Bearer s3cret"),
            ("authorization", "Bearer s3cret"),
        ];
        assert_eq!(status(&gate, &two), 401);
        assert!(same_digest(&[7; 32], &[7; 32]));
        assert!(!same_digest(
            &[7; 32],
            &[[7; 31].as_slice(), &[8]].concat().try_into().unwrap()
        ));
    }

    #[test]
    fn foreign_origins_and_hosts_are_forbidden_on_loopback() {
        let gate = loopback(&["https://app.example.com"]);
        let auth = ("authorization", "Bearer s3cret");
        let ok = |pairs: &[(&str, &str)]| status(&gate, &[&[auth], pairs].concat());
        assert_eq!(ok(&[("host", "localhost:8080")]), 200);
        assert_eq!(ok(&[("host", "[::1]:8080")]), 200);
        assert_eq!(ok(&[("host", "evil.example:8080")]), 403);
        assert_eq!(ok(&[]), 400);
        let host = ("host", "127.0.0.1:8080");
        assert_eq!(ok(&[host, ("origin", "http://localhost:3000")]), 200);
        assert_eq!(ok(&[host, ("origin", "http://127.0.0.1")]), 200);
        assert_eq!(ok(&[host, ("origin", "https://app.example.com")]), 200);
        assert_eq!(ok(&[host, ("origin", "https://app.example.com:443")]), 200);
        for bad in [
            "https://app.example.com:8443",
            "http://app.example.com",
            "https://evil.example",
            "null",
            "not an origin",
            "http://localhost.evil.example",
            "http://user@localhost",
        ] {
            assert_eq!(ok(&[host, ("origin", bad)]), 403, "{bad}");
        }
        // A foreign origin is refused before the token is looked at.
        assert_eq!(
            status(&gate, &[host, ("origin", "https://evil.example")]),
            403
        );
    }

    #[test]
    fn a_non_loopback_address_needs_a_token_and_checks_hosts_only_when_told() {
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(matches!(
            Gate::new(any, None, &[], &[]),
            Err(GateError::NoToken(_))
        ));
        let open = Gate::new(any, Some(Token::new("t")), &[], &[]).unwrap();
        let auth = ("authorization", "Bearer t");
        assert_eq!(status(&open, &[auth, ("host", "devbox.example:8080")]), 200);
        let named = Gate::new(
            any,
            Some(Token::new("t")),
            &[],
            &["devbox.example".to_owned()],
        )
        .unwrap();
        assert_eq!(
            status(&named, &[auth, ("host", "devbox.example:8080")]),
            200
        );
        assert_eq!(status(&named, &[auth, ("host", "other.example")]), 403);
        let bad = ["ftp:".to_owned()];
        assert!(matches!(
            Gate::new(any, Some(Token::new("t")), &bad, &[]),
            Err(GateError::BadOrigin(_))
        ));
        let loopback_open = Gate::new("127.0.0.1:1".parse().unwrap(), None, &[], &[]).unwrap();
        assert!(!loopback_open.has_token());
        assert_eq!(status(&loopback_open, &[("host", "localhost:1")]), 200);
    }

    #[test]
    fn origins_parse_as_scheme_host_and_port() {
        assert_eq!(
            parse_origin("HTTPS://App.Example.com"),
            Some(Origin::Tuple {
                scheme: "https".into(),
                host: "app.example.com".into(),
                port: Some(443)
            })
        );
        assert_eq!(parse_origin("null"), Some(Origin::Null));
        assert_eq!(parse_origin("https://a.example/path"), None);
        assert_eq!(parse_origin("a.example"), None);
    }
}
