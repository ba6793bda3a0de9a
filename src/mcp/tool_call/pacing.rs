//! The progress of one `tools/call` round as the app sees it: only
//! increasing `progress` values (MCP 2025-11-25 "Utilities › Progress":
//! the value MUST increase; one overtaken by a later one is dropped), and
//! at most one passed on per [`PROGRESS_MIN_INTERVAL_MS`]. Within an
//! interval the latest is kept and passed on when the interval ends or
//! before the call's result ([`Paced::flush`]), so the last progress is
//! never lost, a server that sends progress slowly sees each one passed
//! on at once, and a flood of progress for a live call costs at most one
//! `onProgress` item and one AHP chat action per interval, not one per
//! notification.

use tokio::time::{Duration, Instant};

use super::Progress;
use crate::limits::PROGRESS_MIN_INTERVAL_MS;

/// Paces the progress of one call into `out`.
pub struct Paced<'a> {
    out: &'a mut (dyn FnMut(Progress) + Send),
    last: Option<f64>,
    sent_at: Option<Instant>,
    kept: Option<Progress>,
}

impl<'a> Paced<'a> {
    /// Paces into `out`.
    pub fn new(out: &'a mut (dyn FnMut(Progress) + Send)) -> Self {
        Self {
            out,
            last: None,
            sent_at: None,
            kept: None,
        }
    }

    /// One notification: dropped unless its `progress` increases; passed on
    /// at once when the last one passed on is an interval old, else kept
    /// (in place of any kept one) until [`Self::due`].
    pub fn offer(&mut self, p: Progress) {
        if self.last.is_some_and(|last| p.progress <= last) {
            return;
        }
        self.last = Some(p.progress);
        let now = Instant::now();
        if self.sent_at.is_none_or(|at| now >= at + interval()) {
            self.kept = None;
            self.pass(p, now);
        } else {
            self.kept = Some(p);
        }
    }

    /// When the kept notification is to be passed on (`None`: none is kept).
    pub fn due(&self) -> Option<Instant> {
        self.kept
            .as_ref()
            .and(self.sent_at.map(|at| at + interval()))
    }

    /// Passes the kept notification on now (due, or the result is next).
    pub fn flush(&mut self) {
        if let Some(p) = self.kept.take() {
            self.pass(p, Instant::now());
        }
    }

    fn pass(&mut self, p: Progress, now: Instant) {
        self.sent_at = Some(now);
        (self.out)(p);
    }
}

fn interval() -> Duration {
    Duration::from_millis(PROGRESS_MIN_INTERVAL_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(progress: f64) -> Progress {
        Progress {
            progress,
            total: None,
            message: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_passes_its_first_and_its_last_and_slow_progress_passes_each() {
        let mut seen = Vec::new();
        let mut out = |p: Progress| seen.push(p.progress);
        let mut paced = Paced::new(&mut out);
        for i in 1..=1000 {
            paced.offer(at(f64::from(i)));
        }
        paced.offer(at(5.0)); // not increasing: dropped
        let due = paced.due().expect("the last of the burst is kept");
        tokio::time::sleep_until(due).await;
        paced.flush();
        assert_eq!(paced.due(), None);
        tokio::time::sleep(interval() * 2).await;
        paced.offer(at(1001.0));
        tokio::time::sleep(interval() * 2).await;
        paced.offer(at(1002.0));
        paced.flush();
        drop(paced);
        assert_eq!(seen, vec![1.0, 1000.0, 1001.0, 1002.0]);
    }
}
