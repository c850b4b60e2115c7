//! Loading the plugin (CONTRACT §2): config validation, the rg probe
//! through the bash seam, and registration of tools, prompt sections and
//! spill listeners — or nothing, with one warning, when rg is missing.

use std::sync::Arc;

use serde_json::Value;
use thiserror::Error;

use crate::bash::{BashError, BashExecutor, BashRequest, RunMode};
use crate::registry::surface::prompt_sections;
use crate::registry::tools::ToolKind;
use crate::registry::{Owner, Registry};
use crate::release::Release;
use crate::request::config::{Config, ConfigError, RawConfig};
use crate::spill::post_execute::SpillListener;

/// The probe command, exactly.
pub const PROBE_COMMAND: &str = "command -v rg >/dev/null 2>&1";

/// The warning logged when the probe finds no rg.
pub const RG_MISSING_WARNING: &str = "tool-fs-search: ripgrep (rg) not found on the bash executor PATH; glob/grep tools not registered";

/// A load that did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    /// rg was found: both tools, sections and listeners are registered.
    Registered,
    /// rg was not found: nothing registered; the warning was logged.
    RgMissing {
        /// [`RG_MISSING_WARNING`].
        warning: String,
    },
    /// No bash executor: the plugin waits, registering nothing.
    Pending,
}

/// A failed load: nothing is registered.
#[derive(Debug, Error)]
pub enum LoadError {
    #[error(transparent)]
    /// The config failed validation.
    Config(#[from] ConfigError),
    #[error("tool-fs-search: ripgrep availability probe could not start: Error: {0}")]
    /// The executor could not start the probe.
    ProbeCouldNotStart(BashError),
    #[error("tool-fs-search: ripgrep availability probe did not complete")]
    /// The probe was killed, timed out or ended by a signal.
    ProbeDidNotComplete,
    /// `resolve` rejected the probe request; propagated unchanged.
    #[error(transparent)]
    Resolve(BashError),
}

impl Registry {
    /// Loads (or reloads) the fs-search plugin with the raw config object
    /// (CONTRACT §2): both validation layers, the rg probe through the
    /// bash seam, then registration — or nothing when rg is missing.
    pub async fn load_fs_search(&mut self, config: &Value) -> Result<LoadOutcome, LoadError> {
        self.load_fs_search_as(Release::Seed, config).await
    }

    /// Loads (or reloads) the plugin as `release` loads it: the seed's
    /// probes for rg first ([`Registry::load_fs_search`]); 0.1.0-rc.8
    /// validates its two more keys and always registers (a missing rg
    /// fails each call instead).
    pub async fn load_fs_search_as(
        &mut self,
        release: Release,
        config: &Value,
    ) -> Result<LoadOutcome, LoadError> {
        self.unload_fs_search();
        let raw = RawConfig::parse_as(config, release)?;
        let Some(bash) = self.host().bash.clone() else {
            return Ok(LoadOutcome::Pending);
        };
        let config = Arc::new(raw.validate()?);
        if release.probes_at_load()
            && let Some(missing) = probe_for_rg(bash.as_ref()).await?
        {
            return Ok(missing);
        }
        self.register(&config, &bash);
        Ok(LoadOutcome::Registered)
    }

    /// Registers both tools with their sections and spill listeners.
    fn register(&mut self, config: &Arc<Config>, bash: &Arc<dyn BashExecutor>) {
        let [glob_section, grep_section] = prompt_sections(config);
        let store = self.host().spill_store.clone();
        for (tool, section) in [
            (ToolKind::Glob, glob_section),
            (ToolKind::Grep, grep_section),
        ] {
            self.add_section(Owner::FsSearch, section);
            self.add_tool(tool, config.clone(), bash.clone());
            self.add_listener(
                Owner::FsSearch,
                Arc::new(SpillListener {
                    tool,
                    config: config.clone(),
                    store: store.clone(),
                }),
            );
        }
    }

    /// Loads (or reloads) the plugin with a typed config: the same load as
    /// [`Registry::load_fs_search_as`] on the object `config` stands for,
    /// as the release it was validated for.
    pub async fn load(&mut self, config: &Config) -> Result<LoadOutcome, LoadError> {
        let raw = serde_json::to_value(config)
            .map_err(|e| LoadError::Config(ConfigError::Unserialisable(e.to_string())))?;
        self.load_fs_search_as(config.release(), &raw).await
    }

    /// Disposes the plugin: removes its tools, sections and listeners.
    pub fn unload_fs_search(&mut self) {
        self.remove_owned(Owner::FsSearch);
    }
}

/// The seed's load probe: `None` when rg is there, the outcome that
/// registers nothing when it is not.
async fn probe_for_rg(bash: &dyn BashExecutor) -> Result<Option<LoadOutcome>, LoadError> {
    let spec = bash
        .resolve(BashRequest {
            command: PROBE_COMMAND.to_owned(),
            ..BashRequest::default()
        })
        .map_err(LoadError::Resolve)?;
    let Some(probe) = bash
        .run(spec, RunMode::whole())
        .await
        .map_err(LoadError::ProbeCouldNotStart)?
        .run
        .finished()
    else {
        return Err(LoadError::ProbeDidNotComplete);
    };
    if probe.aborted || probe.timed_out || probe.signal.is_some() || probe.exit_code.is_none() {
        return Err(LoadError::ProbeDidNotComplete);
    }
    if probe.exit_code != Some(0) {
        tracing::warn!("{RG_MISSING_WARNING}");
        return Ok(Some(LoadOutcome::RgMissing {
            warning: RG_MISSING_WARNING.to_owned(),
        }));
    }
    Ok(None)
}
