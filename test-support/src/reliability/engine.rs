//! Engines for the reliability tests: the real [`LocalBashExecutor`] with
//! extra child environment entries (its `env` overlay), so a test can put
//! a fake `rg` first on the child's `PATH` without touching the
//! process-wide environment, and registries loaded with a given config.

use std::sync::Arc;

use fs_search_engine::bash::BashError;
use fs_search_engine::{BashExecutor, Host, LoadError, LoadOutcome, Registry, SpillStore};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor};
use serde_json::Value;

/// The real local executor with `config`, its children seeing `env` on top
/// of the inherited environment (through the executor's own `env`
/// overlay, so every run takes the executor's real code path).
pub fn local_executor(
    mut config: LocalBashConfig,
    env: &[(&str, &str)],
) -> Result<Arc<dyn BashExecutor>, BashError> {
    config
        .env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    Ok(Arc::new(LocalBashExecutor::new(config)?))
}

/// A registry over `bash` and `spill_store`, loaded with `config`.
pub async fn registry_with(
    bash: Arc<dyn BashExecutor>,
    spill_store: Option<Arc<dyn SpillStore>>,
    timeout_policy: bool,
    config: &Value,
) -> Result<(Registry, LoadOutcome), LoadError> {
    let mut registry = Registry::new(Host {
        bash: Some(bash),
        spill_store,
        timeout_policy,
    });
    let outcome = registry.load_fs_search(config).await?;
    Ok((registry, outcome))
}

/// A registry over `bash` with no spill store and no timeout policy,
/// loaded with `config`; an error unless both tools were registered.
pub async fn load(bash: Arc<dyn BashExecutor>, config: &Value) -> Result<Registry, String> {
    match registry_with(bash, None, false, config).await {
        Ok((registry, LoadOutcome::Registered)) => Ok(registry),
        Ok((_, other)) => Err(format!("tools not registered: {other:?}")),
        Err(e) => Err(e.to_string()),
    }
}
