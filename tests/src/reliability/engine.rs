//! Engines for the reliability tests: the real [`LocalBashExecutor`] behind
//! a thin wrapper that overlays environment entries on each resolved spec
//! (the request-level `env` of CONTRACT §1.3), so a test can put a fake
//! `rg` first on the child's `PATH` without touching the process-wide
//! environment, and registries loaded with a given config.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use fs_search_engine::bash::{BashError, BashRequest, BashRunResult, BashSpec};
use fs_search_engine::{
    BashExecutor, Host, LoadError, LoadOutcome, LocalBashConfig, LocalBashExecutor, Registry,
    SpillStore,
};
use serde_json::Value;

/// The local executor with extra environment entries for every command
/// it runs (applied under any entries the request itself carries).
#[derive(Debug, Clone)]
pub struct EnvExecutor {
    inner: LocalBashExecutor,
    env: BTreeMap<String, String>,
}

impl EnvExecutor {
    pub fn new(inner: LocalBashExecutor, env: BTreeMap<String, String>) -> Self {
        Self { inner, env }
    }
}

#[async_trait]
impl BashExecutor for EnvExecutor {
    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
        let mut spec = self.inner.resolve(request)?;
        let mut env = self.env.clone();
        env.extend(spec.env.take().unwrap_or_default());
        spec.env = Some(env);
        Ok(spec)
    }

    async fn run(&self, spec: BashSpec) -> Result<BashRunResult, BashError> {
        self.inner.run(spec).await
    }
}

/// The real local executor with `config`, its children seeing `env` on top
/// of the inherited environment.
pub fn local_executor(
    config: LocalBashConfig,
    env: &[(&str, &str)],
) -> Result<Arc<dyn BashExecutor>, BashError> {
    let inner = LocalBashExecutor::new(config)?;
    let env = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Ok(Arc::new(EnvExecutor::new(inner, env)))
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
