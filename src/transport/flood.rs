//! What a flood from a server may cost: a token bucket that paces records
//! ([`Pace`]) and the count of what was left out, reported at most once per
//! [`FLOOD_REPORT_INTERVAL_MS`] and once more at the end ([`Lost`]).
//! Used for stderr lines, MCP log messages and dropped notifications
//! (docs/reliability.md, "Floods").

use std::time::Duration;

use tokio::time::Instant;

use crate::limits::FLOOD_REPORT_INTERVAL_MS;

/// A token bucket: `burst` records at once, then `per_second`.
#[derive(Debug)]
pub struct Pace {
    burst: f64,
    per_second: f64,
    tokens: f64,
    last: Instant,
}

impl Pace {
    /// A full bucket of `burst` tokens, refilled at `per_second`.
    pub fn new(burst: u32, per_second: u32) -> Self {
        Self {
            burst: f64::from(burst),
            per_second: f64::from(per_second),
            tokens: f64::from(burst),
            last: Instant::now(),
        }
    }

    /// Takes one token; `false` when the bucket is empty.
    pub fn admit(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.last).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + refill).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Records (and their bytes) left out since the last report.
#[derive(Debug)]
pub struct Lost {
    records: u64,
    bytes: u64,
    since: Instant,
}

impl Default for Lost {
    fn default() -> Self {
        Self {
            records: 0,
            bytes: 0,
            since: Instant::now(),
        }
    }
}

/// One report of [`Lost`]: how many records and bytes, over how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostReport {
    /// Records left out.
    pub records: u64,
    /// Their bytes (0 where not counted).
    pub bytes: u64,
    /// Seconds the report covers (at least 1).
    pub seconds: u64,
}

impl Lost {
    /// Counts one record of `bytes` left out (the first since a report
    /// starts the interval).
    pub fn add(&mut self, bytes: usize) {
        self.start();
        self.records += 1;
        self.bytes += bytes as u64;
    }

    /// Counts `bytes` more of records already counted (a truncated line's tail).
    pub fn add_bytes(&mut self, bytes: usize) {
        self.start();
        self.bytes += bytes as u64;
    }

    fn start(&mut self) {
        if !self.any() {
            self.since = Instant::now();
        }
    }

    /// Whether anything is counted.
    pub fn any(&self) -> bool {
        self.records > 0 || self.bytes > 0
    }

    /// The report, when one is due ([`FLOOD_REPORT_INTERVAL_MS`] since the
    /// last), which starts a new count.
    pub fn due(&mut self) -> Option<LostReport> {
        let interval = Duration::from_millis(FLOOD_REPORT_INTERVAL_MS);
        if self.any() && self.since.elapsed() >= interval {
            self.take()
        } else {
            None
        }
    }

    /// When the next report is due, if anything is counted.
    pub fn deadline(&self) -> Option<Instant> {
        let interval = Duration::from_millis(FLOOD_REPORT_INTERVAL_MS);
        self.any().then(|| self.since + interval)
    }

    /// The report of everything counted (the end of the stream), if any.
    pub fn take(&mut self) -> Option<LostReport> {
        if !self.any() {
            return None;
        }
        let report = LostReport {
            records: self.records,
            bytes: self.bytes,
            seconds: self.since.elapsed().as_secs().max(1),
        };
        *self = Self::default();
        Some(report)
    }
}

#[cfg(test)]
impl Pace {
    /// As if the last token was taken `ago` earlier.
    fn age(&mut self, ago: Duration) {
        self.last = self.last.checked_sub(ago).unwrap_or(self.last);
    }
}

#[cfg(test)]
impl Lost {
    /// As if the count had started `ago` earlier.
    fn age(&mut self, ago: Duration) {
        self.since = self.since.checked_sub(ago).unwrap_or(self.since);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_gives_the_burst_then_its_rate() {
        let mut pace = Pace::new(3, 10);
        assert_eq!((0..5).filter(|_| pace.admit()).count(), 3);
        pace.age(Duration::from_millis(200));
        assert!((2..=3).contains(&(0..5).filter(|_| pace.admit()).count()));
        pace.age(Duration::from_secs(60));
        assert_eq!((0..5).filter(|_| pace.admit()).count(), 3);
        let mut none = Pace::new(2, 0);
        assert_eq!((0..5).filter(|_| none.admit()).count(), 2);
    }

    #[test]
    fn lost_records_are_reported_once_per_interval_and_at_the_end() {
        let mut lost = Lost::default();
        assert_eq!(lost.take(), None);
        lost.add(10);
        lost.add(5);
        assert_eq!(lost.due(), None);
        lost.age(Duration::from_millis(FLOOD_REPORT_INTERVAL_MS));
        let report = lost.due().expect("due");
        assert_eq!((report.records, report.bytes), (2, 15));
        assert!(report.seconds >= FLOOD_REPORT_INTERVAL_MS / 1000);
        assert_eq!(lost.due(), None);
        lost.add(1);
        lost.add_bytes(99);
        let report = lost.take().expect("the end");
        assert_eq!((report.records, report.bytes), (1, 100));
        assert!(!lost.any());
    }
}
