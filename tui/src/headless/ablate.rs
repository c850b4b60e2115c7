//! `workbench ablate RECORDING|TRANSCRIPT... --set KEY=V1,V2,... [--set ...]
//! [--workdir DIR] [--json | --csv] [--host HOST] [--tokenizer FILE]`:
//! replays the files under every combination of the `--set` values and
//! prints what each variant costs (see [`fs_search_transcript::ablate`]);
//! with `--host`, also what that agent host does to each variant's pages
//! ([`super::ablate_host`]). Exit status: 0 with the table, 2 for a bad
//! `--set` or `--host`, an unreadable file or a failed setup (a message on
//! stderr), 128 + N when signal N stopped it.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use super::ablate_host::HostCuts;
use super::print;
use crate::cli::AblateArgs;
use crate::error::Error;
use fs_search_transcript::TranscriptError;
use fs_search_transcript::{AblateControl, AblateError, AblateInput, ablate as run_ablation};
use fs_search_transcript::{ablate_variants, parse_ablate_setting};
use fs_search_transcript::{ablation_csv, ablation_json, ablation_markdown};

/// Runs `workbench ablate`; its exit status, or its failure (a stop by
/// a signal included).
pub(crate) async fn run(args: &AblateArgs) -> Result<ExitCode, Error> {
    fs_search_process::install_signals();
    ablate_inner(args).await?;
    Ok(ExitCode::SUCCESS)
}

async fn ablate_inner(args: &AblateArgs) -> Result<(), AblateError> {
    let settings = args
        .set
        .iter()
        .map(|raw| parse_ablate_setting(raw))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TranscriptError::Other(e.to_string()))?;
    let variants = ablate_variants(&settings).map_err(|e| TranscriptError::Other(e.to_string()))?;
    let lens = args
        .host
        .as_deref()
        .map(fs_search_lens::resolve)
        .transpose()
        .map_err(|e| TranscriptError::Other(format!("--host: {e}")))?;
    if let Some(dir) = &args.workdir {
        fs_search_process::check_workdir(dir)
            .map_err(|e| TranscriptError::Other(format!("--workdir: {e}")))?;
    }
    let tokenizer = fs_search_process::load_tokenizer_in_background(args.tokenizer.file());
    let inputs = args
        .files
        .iter()
        .map(|file| AblateInput::load(file, args.workdir.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    let tokenizer = fs_search_process::join_tokenizer(tokenizer)
        .await
        .map_err(|e| TranscriptError::Other(format!("--tokenizer: {e}")))?;
    let mut host = lens.map(|lens| {
        let files = inputs.iter().map(|i| i.file.clone()).collect();
        HostCuts::new(lens, files, variants.len() + 1)
    });
    let control = AblateControl {
        cancel: CancellationToken::new(),
        progress: &mut |_| {},
        pages: &mut |event| {
            if let Some(host) = host.as_mut() {
                host.add(&event);
            }
        },
        executor: args.sandbox.kind(),
        contract: args.contract.contract,
        rg: args.contract.rg.clone(),
    };
    let ablation = run_ablation(&inputs, &variants, &tokenizer, control).await?;
    let text = if args.json {
        let mut object = ablation_json(&ablation);
        if let (Some(host), Some(map)) = (&host, object.as_object_mut()) {
            let overrides: Vec<_> = ablation
                .variants
                .iter()
                .map(|v| v.overrides.clone())
                .collect();
            map.insert("host".to_owned(), host.json(&overrides));
        }
        format!("{object}\n")
    } else if args.csv {
        ablation_csv(&ablation)
    } else {
        let mut text = ablation_markdown(&ablation);
        if let Some(host) = &host {
            text.push_str(&host.markdown());
        }
        text
    };
    print(&text);
    Ok(())
}
