//! The MCP `clientInfo` names each host sends, and the lens they stand
//! for: a call recorded by `workbench mcp --record` carries its client, so
//! `replay --host auto` (and the TUI) can pick that host's lens by
//! default. Each name is cited from the host's own source where it is open
//! (`docs/hosts.md` has the table).

use super::{LENSES, Lens, resolve};

/// One host's `clientInfo.name`.
#[derive(Debug)]
pub struct ClientName {
    /// The name exactly as the host sends it.
    pub name: &'static str,
    /// The host it stands for, as [`Lens::host`] names it.
    pub host: &'static str,
    /// Where the name comes from: repository, file and function (and
    /// commit), or how it was observed.
    pub source: &'static str,
    /// Whether the name was read from the host's source (false: observed
    /// or documented only).
    pub from_source: bool,
}

/// The client names known, one per host, in [`LENSES`]' host order.
pub static CLIENT_NAMES: &[ClientName] = &[
    ClientName {
        name: "codex-mcp-client",
        host: "codex",
        source: "openai/codex codex-rs/codex-mcp/src/rmcp_client.rs, mcp_initialize_request_params (Implementation::new(\"codex-mcp-client\", CARGO_PKG_VERSION), title \"Codex\"), commit 02beca9f",
        from_source: true,
    },
    ClientName {
        name: "claude-code",
        host: "claude-code",
        source: "closed source, not verified from source: observed in a server's debug log of Claude Code 2.0.73's initialize (cl-ai-project/cl-mcp issue 26) and reported for 2.1.143 (screenpipe/screenpipe pull request 5796)",
        from_source: false,
    },
    ClientName {
        name: "opencode",
        host: "opencode",
        source: "anomalyco/opencode (formerly sst/opencode) packages/opencode/src/mcp/index.ts, MCP.create (new Client({name: \"opencode\", version: Installation.VERSION})), commit 001133bc",
        from_source: true,
    },
    ClientName {
        name: "gemini-cli-mcp-client",
        host: "gemini-cli",
        source: "google-gemini/gemini-cli packages/core/src/tools/mcp-client.ts, connectToMcpServer (new Client({name: 'gemini-cli-mcp-client', version: clientVersion})), commit 5411f113",
        from_source: true,
    },
    ClientName {
        name: "qwen-code-mcp-client",
        host: "qwen-code",
        source: "QwenLM/qwen-code packages/core/src/tools/mcp-client.ts, connectToMcpServer (createMcpClient('qwen-code-mcp-client', …); older versions new Client({name: 'qwen-code-mcp-client', version: '0.0.1'})), commit 00378428",
        from_source: true,
    },
];

/// The host whose MCP client sends `name` as its `clientInfo.name`
/// (exactly: names are compared as sent).
pub fn host_for_client(name: &str) -> Option<&'static ClientName> {
    CLIENT_NAMES.iter().find(|c| c.name == name)
}

/// The newest lens of the host whose client sends `name`; `None` for a
/// client no lens is known for.
pub fn lens_for_client(name: &str) -> Option<&'static Lens> {
    let host = host_for_client(name)?.host;
    LENSES.iter().rev().find(|l| l.host == host)
}

/// The lens of the host whose client sends `name` at `version` (its
/// `clientInfo.version`): the era that version falls in when it is a
/// dotted number the host's eras cover, else the host's newest lens (a
/// development build's `0.0.0`, a host without numbered eras, a version
/// before every era).
pub fn lens_for_client_version(name: &str, version: Option<&str>) -> Option<&'static Lens> {
    let newest = lens_for_client(name)?;
    let numbered = version.filter(|v| {
        !v.is_empty()
            && v.split('.').all(|p| p.parse::<u64>().is_ok())
            && v.split('.').any(|p| p.parse::<u64>().is_ok_and(|n| n > 0))
    });
    Some(
        numbered
            .and_then(|v| resolve(&format!("{}@{v}", newest.host)).ok())
            .unwrap_or(newest),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_s_real_client_name_picks_its_newest_lens() {
        let picked = |name: &str| lens_for_client(name).map(Lens::name);
        assert_eq!(picked("codex-mcp-client").as_deref(), Some("codex@0.120"));
        assert_eq!(
            picked("claude-code").as_deref(),
            Some("claude-code@docs-2026-10")
        );
        assert_eq!(picked("opencode").as_deref(), Some("opencode@current"));
        assert_eq!(
            picked("gemini-cli-mcp-client").as_deref(),
            Some("gemini-cli@0.48")
        );
        assert_eq!(
            picked("qwen-code-mcp-client").as_deref(),
            Some("qwen-code@current")
        );
    }

    #[test]
    fn an_unknown_or_near_miss_name_has_no_lens() {
        for name in ["", "codex", "Codex", "gemini-cli", "raw", "claude-code "] {
            assert!(lens_for_client(name).is_none(), "{name:?}");
        }
    }

    #[test]
    fn every_host_has_one_client_name_and_every_name_a_host_with_lenses() {
        let mut hosts: Vec<&str> = CLIENT_NAMES.iter().map(|c| c.host).collect();
        assert_eq!(hosts, crate::hosts());
        hosts.dedup();
        assert_eq!(hosts.len(), CLIENT_NAMES.len());
        assert!(CLIENT_NAMES.iter().all(|c| !c.source.is_empty()));
        assert!(
            CLIENT_NAMES
                .iter()
                .filter(|c| !c.from_source)
                .all(|c| c.source.contains("not verified from source"))
        );
    }

    #[test]
    fn the_client_s_version_picks_the_era_it_falls_in() {
        let picked = |name: &str, version: Option<&str>| {
            lens_for_client_version(name, version).map(Lens::name)
        };
        assert_eq!(
            picked("codex-mcp-client", Some("0.57.0")).as_deref(),
            Some("codex@0.56")
        );
        assert_eq!(
            picked("codex-mcp-client", Some("0.130.1")).as_deref(),
            Some("codex@0.120")
        );
        assert_eq!(
            picked("gemini-cli-mcp-client", Some("0.30.0")).as_deref(),
            Some("gemini-cli@0.29")
        );
        // A development build, a version before every era, no version,
        // a label: the newest lens.
        for version in [Some("0.0.0"), Some("0.10.0"), None, Some("dev")] {
            let name = if version == Some("0.10.0") {
                "gemini-cli-mcp-client"
            } else {
                "codex-mcp-client"
            };
            let newest = lens_for_client(name).map(Lens::name);
            assert_eq!(picked(name, version), newest, "{version:?}");
        }
        assert_eq!(
            picked("qwen-code-mcp-client", Some("0.0.1")).as_deref(),
            Some("qwen-code@current")
        );
        assert!(picked("raw", Some("1")).is_none());
    }
}
