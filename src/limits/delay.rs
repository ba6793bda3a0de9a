//! The restart backoff that [`Limits`] gives.

use super::Limits;

impl Limits {
    /// Delay before restart attempt `attempt` (1-based): `backoff * 2^(attempt-1)`,
    /// capped at `restart_backoff_max_ms`.
    pub fn restart_delay_ms(&self, attempt: u32) -> u64 {
        let shift = attempt.saturating_sub(1).min(30);
        self.restart_backoff_ms
            .saturating_mul(1u64 << shift)
            .min(self.restart_backoff_max_ms)
    }
}
