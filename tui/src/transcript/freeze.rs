//! Placeholder.
pub async fn command(_args: &crate::cli::FreezeArgs) -> u8 {
    2
}
