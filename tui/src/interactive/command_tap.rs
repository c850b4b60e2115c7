//! The command tap: a [`BashExecutor`] around the real one that notes
//! every command it is handed to run (the resolved spec's command line
//! and working directory, exactly what `bash -c` gets), so the Call tab
//! can show the rg command line a developer compares with their shell,
//! and the host it ran on when that is another machine.
//! A call's commands are collected by running it inside [`capture`]
//! (a tokio task-local: calls on other tasks never mix).

use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use fs_search_engine::BashExecutor;
use fs_search_engine::bash::{
    BashError, BashRequest, BashRunResult, BashSpec, RunMode, RunOutcome,
};

/// One command the executor ran for a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RanCommand {
    /// The command line, as `bash -c` runs it.
    pub command: String,
    /// The directory it ran in.
    pub workdir: String,
    /// The host it ran on (`ssh://HOST`), when not this machine.
    pub host: Option<String>,
}

tokio::task_local! {
    static COMMANDS: Arc<Mutex<Vec<RanCommand>>>;
}

/// Runs `call`, returning its output and the commands the tap ran for
/// it, in order.
pub(crate) async fn capture<F: Future>(call: F) -> (F::Output, Vec<RanCommand>) {
    let commands = Arc::new(Mutex::new(Vec::new()));
    let output = COMMANDS.scope(commands.clone(), call).await;
    let ran = commands.lock().map(|c| c.clone()).unwrap_or_default();
    (output, ran)
}

/// The tap around `inner`: every run is passed on unchanged.
pub(crate) struct CommandTap {
    inner: Arc<dyn BashExecutor>,
    /// Where `inner` runs commands, when not on this machine.
    host: Option<String>,
}

impl CommandTap {
    /// Taps `inner`, which runs commands on this machine.
    #[cfg(test)]
    pub(crate) fn wrap(inner: Arc<dyn BashExecutor>) -> Arc<dyn BashExecutor> {
        Arc::new(Self { inner, host: None })
    }

    /// A tap for an executor of `kind`: its commands are noted with the
    /// host they run on when that is another machine.
    pub(crate) fn for_executor(
        kind: &fs_search_process::ExecutorKind,
    ) -> impl FnOnce(Arc<dyn BashExecutor>) -> Arc<dyn BashExecutor> {
        let host = match kind {
            fs_search_process::ExecutorKind::Ssh(remote) => Some(remote.label.clone()),
            _ => None,
        };
        move |inner| Arc::new(Self { inner, host }) as Arc<dyn BashExecutor>
    }

    fn note(&self, spec: &BashSpec) {
        let _ = COMMANDS.try_with(|commands| {
            if let Ok(mut commands) = commands.lock() {
                commands.push(RanCommand {
                    command: spec.command.clone(),
                    workdir: spec.workdir.clone(),
                    host: self.host.clone(),
                });
            }
        });
    }
}

#[async_trait]
impl BashExecutor for CommandTap {
    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
        self.inner.resolve(request)
    }

    async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError> {
        self.note(&spec);
        self.inner.run(spec, mode).await
    }

    fn release(&self, result: &BashRunResult) {
        self.inner.release(result);
    }

    fn start(&self, spec: BashSpec) -> Result<(), BashError> {
        self.inner.start(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fs_search_exec::{LocalBashConfig, LocalBashExecutor};

    fn tapped(dir: &std::path::Path) -> Arc<dyn BashExecutor> {
        let local = LocalBashExecutor::new(LocalBashConfig {
            cwd: Some(dir.to_string_lossy().into_owned()),
            ..LocalBashConfig::default()
        })
        .unwrap();
        CommandTap::wrap(Arc::new(local))
    }

    #[tokio::test]
    async fn a_captured_run_notes_the_command_and_its_directory_and_passes_it_on() {
        let dir = tempfile::tempdir().unwrap();
        let bash = tapped(dir.path());
        let request = BashRequest {
            command: "printf 'it ran'".into(),
            ..BashRequest::default()
        };
        let spec = bash.resolve(request).unwrap();
        let (run, ran) = capture(bash.run(spec, RunMode::whole())).await;
        let result = run.unwrap().run.finished().unwrap();
        assert_eq!(result.stdout.text, "it ran");
        assert_eq!(
            ran,
            vec![RanCommand {
                command: "printf 'it ran'".into(),
                workdir: dir.path().to_string_lossy().into_owned(),
                host: None,
            }]
        );
    }

    #[tokio::test]
    async fn a_run_outside_a_capture_is_not_noted_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        let bash = tapped(dir.path());
        let spec = bash
            .resolve(BashRequest {
                command: "true".into(),
                ..BashRequest::default()
            })
            .unwrap();
        bash.run(spec, RunMode::whole()).await.unwrap();
        let (_, ran) = capture(async {}).await;
        assert!(ran.is_empty());
    }
}
