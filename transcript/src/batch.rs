//! Many transcripts replayed as one run (`workbench replay FILE...` and
//! [`super::assert`]): the share of the records a `--shard K/N` run
//! takes, a pool of `--jobs` workers replaying records at once (each
//! worker with engines of its own on each transcript's one materialised
//! tree), and the results handed back file by file in the order given, so
//! that what is reported never depends on the number of workers.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{OnceCell, mpsc};

use super::error::TranscriptError;
use super::fixture_engine::{EngineTree, FixtureEngine, rg_version_for};
use super::format::tree_path;
use super::format::{Outcome, Transcript};
use super::replay::{RecordCheck, Replay, read_transcript};
use fs_search_engine::release::Release;
use fs_search_process::ExecutorKind;
use fs_search_tokens::Tokenizer;

/// `--shard K/N`: share `index` (from 1) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// A `--shard` value that is not `K/N` with 1 <= K <= N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: expected K/N with 1 <= K <= N, e.g. 2/4")]
pub struct ShardError(String);

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let bad = || ShardError(raw.to_owned());
        let (index, count) = raw.split_once('/').ok_or_else(bad)?;
        let index: usize = index.trim().parse().map_err(|_| bad())?;
        let count: usize = count.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether the record at `position` (counted from 0 across all files,
    /// in the order given) belongs to this share: round robin, so the
    /// shares differ in size by at most one record.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}

/// How a batch runs.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Records replayed at once (at least 1).
    pub jobs: usize,
    /// The share of the records to replay; `None`: all of them.
    pub shard: Option<Shard>,
    /// Where the trees and spill roots are made.
    pub temp_parent: PathBuf,
    /// Count every result's tokens (`--update`, `--max-tokens`); else
    /// only in files whose records carry a count.
    pub count_tokens: bool,
    /// The `tokenizer.json` to count with (else the embedded one).
    pub tokenizer: Option<PathBuf>,
    /// The executor the records' calls run under.
    pub executor: ExecutorKind,
    /// The release every file replays as (`replay --contract`); `None`:
    /// each header's.
    pub release: Option<Release>,
}

impl BatchOptions {
    /// Every record, one job per core, temp dirs in the temp dir, tokens
    /// counted where records carry them.
    pub fn new() -> Self {
        Self {
            jobs: default_jobs(),
            shard: None,
            temp_parent: std::env::temp_dir(),
            count_tokens: false,
            tokenizer: None,
            executor: ExecutorKind::Local,
            release: None,
        }
    }
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// The number of cores this process may use (1 when unknown).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// One transcript's replay: its share of the records checked, with the
/// time each record's call took.
#[derive(Debug)]
pub struct FileReplay {
    pub replay: Replay,
    /// How long each check's call took, in the order of `checks`.
    pub durations: Vec<Duration>,
}

/// What one file gave: its replay, or why it could not be replayed.
pub type FileResult = Result<FileReplay, TranscriptError>;

/// A transcript read and its share chosen.
struct Plan {
    path: PathBuf,
    label: String,
    transcript: Transcript,
    /// The indexes of the records in this share.
    selected: Vec<usize>,
    needs_tokens: bool,
}

/// One record to replay: its file and its index there.
#[derive(Debug, Clone, Copy)]
struct Item {
    file: usize,
    record: usize,
}

/// What the workers share.
struct Shared {
    plans: Vec<Option<Plan>>,
    items: Vec<Item>,
    next: AtomicUsize,
    trees: Vec<OnceCell<Result<Arc<EngineTree>, String>>>,
    tokenizer: OnceCell<Result<Arc<Tokenizer>, String>>,
    tokenizer_file: Option<PathBuf>,
    temp_parent: PathBuf,
    executor: ExecutorKind,
    release: Option<Release>,
}

/// One finished item: the outcome and the time it took.
type ItemResult = Result<(Outcome, Duration), TranscriptError>;

/// Replays `files` and hands each file's result to `on_file` in the order
/// of `files`, each as soon as it and every file before it are done.
/// A signal stops the run: the workers finish (their calls are cancelled,
/// their temp dirs removed) and `Err(Stopped)` is returned.
pub async fn replay_files(
    files: &[PathBuf],
    options: &BatchOptions,
    mut on_file: impl FnMut(&Path, FileResult),
) -> Result<(), TranscriptError> {
    let mut failed: BTreeMap<usize, TranscriptError> = BTreeMap::new();
    let mut plans = Vec::with_capacity(files.len());
    let mut position = 0;
    for (index, path) in files.iter().enumerate() {
        match read_transcript(path) {
            Ok(transcript) => {
                let selected = (0..transcript.records.len())
                    .filter(|_| {
                        let takes = options.shard.is_none_or(|s| s.takes(position));
                        position += 1;
                        takes
                    })
                    .collect();
                let needs_tokens = options.count_tokens
                    || transcript
                        .records
                        .iter()
                        .any(|r| r.outcome.tokens.is_some());
                plans.push(Some(Plan {
                    path: path.clone(),
                    label: path.display().to_string(),
                    transcript,
                    selected,
                    needs_tokens,
                }));
            }
            Err(e) => {
                failed.insert(index, e);
                plans.push(None);
            }
        }
    }
    let items: Vec<Item> = plans
        .iter()
        .enumerate()
        .filter_map(|(file, plan)| Some((file, plan.as_ref()?)))
        .flat_map(|(file, plan)| {
            plan.selected
                .iter()
                .map(move |&record| Item { file, record })
        })
        .collect();
    let shared = Arc::new(Shared {
        trees: plans.iter().map(|_| OnceCell::new()).collect(),
        plans,
        items,
        next: AtomicUsize::new(0),
        tokenizer: OnceCell::new(),
        tokenizer_file: options.tokenizer.clone(),
        temp_parent: options.temp_parent.clone(),
        executor: options.executor.clone(),
        release: options.release,
    });
    // The tokenizer loads (~0.4 s) while the first calls run.
    let loading = shared
        .plans
        .iter()
        .flatten()
        .any(|p| p.needs_tokens && !p.selected.is_empty())
        .then(|| {
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                let _ = tokenizer_of(&shared).await;
            })
        });
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let workers: Vec<_> = (0..options.jobs.max(1).min(shared.items.len().max(1)))
        .map(|_| tokio::spawn(work(Arc::clone(&shared), sender.clone())))
        .collect();
    drop(sender);

    let rg_now = rg_version_for(&options.executor);
    let mut results: Vec<Option<ItemResult>> = (0..shared.items.len()).map(|_| None).collect();
    // Items of file f are items[first[f]..first[f + 1]].
    let mut first = Vec::with_capacity(files.len() + 1);
    let mut count = 0;
    for plan in &shared.plans {
        first.push(count);
        count += plan.as_ref().map_or(0, |p| p.selected.len());
    }
    first.push(count);
    let mut reported = 0;
    let mut stopped = None;
    loop {
        // Hand over every file whose items are all done, in order.
        while reported < files.len()
            && results[first[reported]..first[reported + 1]]
                .iter()
                .all(Option::is_some)
            && stopped.is_none()
        {
            let outcome = match failed.remove(&reported) {
                Some(e) => Err(e),
                None => {
                    let slots = &mut results[first[reported]..first[reported + 1]];
                    assemble(&shared, reported, slots, &rg_now).await
                }
            };
            if let Err(TranscriptError::Stopped(signal)) = outcome {
                stopped = Some(signal);
                break;
            }
            on_file(&files[reported], outcome);
            reported += 1;
        }
        if reported == files.len() || stopped.is_some() {
            break;
        }
        match receiver.recv().await {
            Some((index, result)) => results[index] = Some(result),
            None => break,
        }
    }
    drop(receiver);
    for worker in workers.into_iter().chain(loading) {
        let _ = worker.await;
    }
    match stopped.or_else(fs_search_process::stopped_by) {
        Some(signal) => Err(TranscriptError::Stopped(signal)),
        None => Ok(()),
    }
}

/// A file's replay from its finished items (the first error, in record
/// order, when any failed).
async fn assemble(
    shared: &Shared,
    file: usize,
    slots: &mut [Option<ItemResult>],
    rg_now: &str,
) -> FileResult {
    let Some(plan) = shared.plans[file].as_ref() else {
        return Err(TranscriptError::Other("the transcript vanished".into()));
    };
    let tree = tree_of(shared, file).await?;
    let rg_major = fs_search_process::major_of_line(rg_now);
    let header = &plan.transcript.header;
    let release = shared.release.unwrap_or(header.contract);
    let mut checks = Vec::with_capacity(slots.len());
    let mut durations = Vec::with_capacity(slots.len());
    for (slot, &record) in slots.iter_mut().zip(&plan.selected) {
        let Some(result) = slot.take() else {
            return Err(TranscriptError::Other("a record was not replayed".into()));
        };
        let (current, took) = result?;
        checks.push(RecordCheck::new(
            header,
            plan.transcript.records[record].clone(),
            current,
            release,
            rg_major,
        ));
        durations.push(took);
    }
    Ok(FileReplay {
        replay: Replay {
            file: plan.label.clone(),
            transcript: plan.transcript.clone(),
            checks,
            rg_now: rg_now.to_owned(),
            release,
            tree,
        },
        durations,
    })
}

/// The file's tree, materialised once for all workers.
async fn tree_of(shared: &Shared, file: usize) -> Result<Arc<EngineTree>, TranscriptError> {
    let Some(plan) = shared.plans[file].as_ref() else {
        return Err(TranscriptError::Other("the transcript vanished".into()));
    };
    let tree = shared.trees[file]
        .get_or_init(|| async {
            let path = tree_path(&plan.path, &plan.transcript.header.tree);
            EngineTree::prepare(&path, &shared.temp_parent)
                .map(Arc::new)
                .map_err(|e| tree_error(&plan.label, &e))
        })
        .await;
    tree.clone().map_err(TranscriptError::Other)
}

/// The message of a tree that cannot be set up, as a replay reports it.
fn tree_error(label: &str, error: &TranscriptError) -> String {
    format!("{label}:1: the header's tree: {error}")
}

/// The tokenizer, loaded once for all workers.
async fn tokenizer_of(shared: &Shared) -> Result<Arc<Tokenizer>, TranscriptError> {
    let tokenizer = shared
        .tokenizer
        .get_or_init(|| async {
            let handle =
                fs_search_process::load_tokenizer_in_background(shared.tokenizer_file.as_deref());
            fs_search_process::join_tokenizer(handle)
                .await
                .map(Arc::new)
                .map_err(|e| format!("--tokenizer: {e}"))
        })
        .await;
    tokenizer.clone().map_err(TranscriptError::Other)
}

/// A worker: takes the next item until none is left (or a signal came),
/// with an engine of its own per file on the file's shared tree.
async fn work(shared: Arc<Shared>, results: mpsc::UnboundedSender<(usize, ItemResult)>) {
    let mut engine: Option<(usize, FixtureEngine)> = None;
    loop {
        let index = shared.next.fetch_add(1, Ordering::Relaxed);
        let Some(&item) = shared.items.get(index) else {
            return;
        };
        let result = run_item(&shared, item, &mut engine).await;
        let stop = matches!(result, Err(TranscriptError::Stopped(_)));
        if results.send((index, result)).is_err() || stop {
            return;
        }
    }
}

async fn run_item(
    shared: &Shared,
    item: Item,
    engine: &mut Option<(usize, FixtureEngine)>,
) -> ItemResult {
    TranscriptError::check_stopped()?;
    let Some(plan) = shared.plans[item.file].as_ref() else {
        return Err(TranscriptError::Other("the transcript vanished".into()));
    };
    if engine.as_ref().is_none_or(|(file, _)| *file != item.file) {
        // Items come in file order: the previous file's engine is done.
        *engine = None;
        let header = &plan.transcript.header;
        let made = FixtureEngine::on_tree(
            tree_of(shared, item.file).await?,
            header.config.clone(),
            &header.env.ripgrep_config,
            &shared.temp_parent,
        )
        .map_err(|e| TranscriptError::Other(tree_error(&plan.label, &e)))?
        .with_executor(shared.executor.clone())
        .with_release(shared.release.unwrap_or(header.contract));
        *engine = Some((item.file, made));
    }
    let Some((_, fixture)) = engine.as_mut() else {
        return Err(TranscriptError::Other("the engine vanished".into()));
    };
    let record = &plan.transcript.records[item.record];
    let started = Instant::now();
    let mut current = fixture
        .run(&record.call)
        .await
        .map_err(|source| TranscriptError::Setup {
            file: plan.label.clone(),
            line: record.line,
            name: record.call.name.clone(),
            source,
        })?;
    let took = started.elapsed();
    TranscriptError::check_stopped()?;
    if plan.needs_tokens {
        let tokenizer = tokenizer_of(shared).await?;
        current.tokens = Some(tokenizer.count(&current.text) as u64);
    }
    Ok((current, took))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_k_of_n_with_k_from_1_to_n() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(" 1 / 1 ".parse(), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "1/2/3", "-1/2", ""] {
            assert_eq!(
                bad.parse::<Shard>(),
                Err(ShardError(bad.to_owned())),
                "{bad:?}"
            );
        }
        assert_eq!(Shard { index: 3, count: 7 }.to_string(), "3/7");
    }

    #[test]
    fn the_shares_of_n_cover_every_position_once_and_differ_by_at_most_one() {
        for records in 0..40 {
            for count in 1..=records.max(1) {
                let shares: Vec<Vec<usize>> = (1..=count)
                    .map(|index| {
                        let shard = Shard { index, count };
                        (0..records).filter(|p| shard.takes(*p)).collect()
                    })
                    .collect();
                let mut all: Vec<usize> = shares.concat();
                all.sort_unstable();
                assert_eq!(all, (0..records).collect::<Vec<_>>(), "{records}/{count}");
                let sizes: Vec<usize> = shares.iter().map(Vec::len).collect();
                let (min, max) = (sizes.iter().min(), sizes.iter().max());
                assert!(max.zip(min).is_some_and(|(a, b)| a - b <= 1), "{sizes:?}");
            }
        }
    }
}
