//! The tests' shorthand for the one run method: an uncapped run's result,
//! and a capped run's end (`BashExecutor::run` with the mode spelled out).

use fs_search_engine::bash::{
    BashError, BashExecutor, BashRunResult, BashSpec, CappedRun, OverCap, RunMode,
};

/// [`BashExecutor::run`] in the two modes the tests use most.
pub(crate) trait RunShorthand {
    /// An uncapped run; a stop at the cap (which it never makes) is an
    /// error.
    async fn whole(&self, spec: BashSpec) -> Result<BashRunResult, BashError>;
    /// A capped run keeping stdout in the result.
    async fn capped(&self, spec: BashSpec, over_cap: OverCap) -> Result<CappedRun, BashError>;
}

impl<T: BashExecutor + ?Sized> RunShorthand for T {
    async fn whole(&self, spec: BashSpec) -> Result<BashRunResult, BashError> {
        self.run(spec, RunMode::whole())
            .await?
            .run
            .finished()
            .ok_or_else(|| BashError::Other("an uncapped run stopped at the cap".to_owned()))
    }

    async fn capped(&self, spec: BashSpec, over_cap: OverCap) -> Result<CappedRun, BashError> {
        Ok(self.run(spec, RunMode::capped(over_cap)).await?.run)
    }
}
