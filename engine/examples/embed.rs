//! Embedding the engine in a host: load the plugin with the local bash
//! executor rooted at a directory, run one grep, print what the model sees.
//!
//! ```sh
//! cargo run -p fs-search-engine --example embed -- DIR PATTERN
//! ```

// An example prints what the model sees.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::sync::Arc;

use fs_search_engine::{Config, ExecContext, GrepArgs, Host, LoadOutcome, Registry};

use fs_search_exec::{LocalBashConfig, LocalBashExecutor, LocalSpillStore};

#[tokio::main]
async fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    let (Some(dir), Some(pattern)) = (argv.next(), argv.next()) else {
        eprintln!("usage: embed DIR PATTERN");
        return ExitCode::from(2);
    };
    match grep(dir, pattern).await {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("embed: {e}");
            ExitCode::from(2)
        }
    }
}

async fn grep(dir: String, pattern: String) -> Result<String, Box<dyn std::error::Error>> {
    // The host's services: a bash executor rooted at DIR, a spill store
    // for over-cap results, and the timeout policy.
    let bash = LocalBashExecutor::new(LocalBashConfig {
        cwd: Some(dir.clone()),
        ..LocalBashConfig::default()
    })?;
    let mut registry = Registry::new(Host {
        bash: Some(Arc::new(bash)),
        spill_store: Some(Arc::new(LocalSpillStore::new(None))),
        timeout_policy: true,
    });
    if let LoadOutcome::RgMissing { warning } = registry.load(&Config::with_sampling(true)).await? {
        return Err(warning.into());
    }
    // One call, in a session whose workspace is DIR.
    let exec = ExecContext::new("call-1").with_session(Some("embed"), Some(&dir));
    let args = GrepArgs {
        pattern,
        ..GrepArgs::default()
    };
    let result = registry.grep(&args, &exec).await;
    Ok(result.text)
}
