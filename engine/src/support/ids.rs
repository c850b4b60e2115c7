//! Random identifiers for file names and sessions.

/// `bytes` random bytes as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    if getrandom::fill(&mut raw).is_err() {
        // No OS randomness: fall back to the clock and a counter, which
        // still keeps names unique within the process.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
            ^ u128::from(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        for (i, b) in raw.iter_mut().enumerate() {
            *b = (seed >> ((i % 16) * 8)) as u8;
        }
    }
    raw.iter().map(|b| format!("{b:02x}")).collect()
}
