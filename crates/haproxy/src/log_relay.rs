//! Relays what HAProxy writes to its standard error into the controller's log, within a
//! budget of lines a second.
//!
//! When thousands of servers fail their health checks at once (at start-up, with 100k
//! services, HAProxy writes about 300,000 "Server ... is DOWN" lines in a minute),
//! formatting every line cost the controller a core that HAProxy itself needed. Beyond
//! the budget (per level), warnings and alerts are counted and summed up once a second
//! instead.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::time::Instant;

/// Warnings relayed a second, and alerts; the rest are counted.
pub const RELAYED_LINES_PER_SECOND: u32 = 100;
const WINDOW: Duration = Duration::from_secs(1);

/// The level of a line that counts against the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Alert,
    Warning,
}

/// A line's level; `None` for a routine line (notices, the proxies each stop lists),
/// logged at debug level outside the budget.
fn level(line: &str) -> Option<Level> {
    // Every stop and reload lists each proxy it stopped: routine, not a warning.
    let routine = line.contains("stopped (cumulated conns")
        || line.contains("Exiting Master process")
        || line.contains("exited with code 0")
        || line.contains("All workers exited");
    if line.contains("[ALERT]") {
        Some(Level::Alert)
    } else if line.contains("[WARNING]") && !routine {
        Some(Level::Warning)
    } else {
        None
    }
}

/// Lines counted instead of relayed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct HeldBack {
    alerts: u64,
    warnings: u64,
}

impl HeldBack {
    fn is_empty(self) -> bool {
        self.alerts == 0 && self.warnings == 0
    }
}

/// The budget of one window, which opens at the first line after a quiet time: how many
/// lines of each level it relayed (alerts have a budget of their own, so that a flood of
/// warnings cannot hide why a reload failed), and what it held back.
#[derive(Debug, Default)]
struct Budget {
    window_start: Option<Instant>,
    relayed_alerts: u32,
    relayed_warnings: u32,
    held_back: HeldBack,
}

impl Budget {
    /// Whether a warning or an alert arriving at `now` is relayed; and, when a window with
    /// lines held back ended before it, what it held back.
    fn admit(&mut self, level: Level, now: Instant) -> (bool, Option<HeldBack>) {
        let ended = match self.window_start {
            Some(start) if now < start + WINDOW => None,
            _ => {
                let ended = self.take_summary();
                self.window_start = Some(now);
                ended
            }
        };
        let (relayed, held_back) = match level {
            Level::Alert => (&mut self.relayed_alerts, &mut self.held_back.alerts),
            Level::Warning => (&mut self.relayed_warnings, &mut self.held_back.warnings),
        };
        if *relayed < RELAYED_LINES_PER_SECOND {
            *relayed += 1;
            return (true, ended);
        }
        *held_back += 1;
        (false, ended)
    }

    /// When the lines held back are to be summed up, if any are.
    fn summary_due(&self) -> Option<Instant> {
        self.window_start
            .filter(|_| !self.held_back.is_empty())
            .map(|start| start + WINDOW)
    }

    /// Closes the window; returns what it held back, if anything.
    fn take_summary(&mut self) -> Option<HeldBack> {
        let held_back = std::mem::take(self).held_back;
        (!held_back.is_empty()).then_some(held_back)
    }
}

/// Relays HAProxy's standard error until it closes.
pub(crate) async fn forward_log(stderr: tokio::process::ChildStderr) {
    let mut lines = BufReader::new(stderr).lines();
    let mut budget = Budget::default();
    loop {
        let next = match budget.summary_due() {
            Some(due) => match tokio::time::timeout_at(due, lines.next_line()).await {
                Ok(next) => next,
                Err(_) => {
                    summarize(budget.take_summary());
                    continue;
                }
            },
            None => lines.next_line().await,
        };
        let Ok(Some(line)) = next else {
            summarize(budget.take_summary());
            return;
        };
        let Some(level) = level(&line) else {
            if !line.trim().is_empty() {
                tracing::debug!(target: "haproxy", "{line}");
            }
            continue;
        };
        let (relay, ended) = budget.admit(level, Instant::now());
        summarize(ended);
        if !relay {
            continue;
        }
        match level {
            Level::Alert => tracing::error!(target: "haproxy", "{line}"),
            Level::Warning => tracing::warn!(target: "haproxy", "{line}"),
        }
    }
}

fn summarize(held_back: Option<HeldBack>) {
    let Some(HeldBack { alerts, warnings }) = held_back else {
        return;
    };
    tracing::warn!(
        target: "haproxy",
        alerts,
        warnings,
        "haproxy wrote more than {RELAYED_LINES_PER_SECOND} warnings or alerts in a second; these were counted, not relayed"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_past_each_level_s_budget_are_counted_and_summed_up_when_their_window_ends() {
        let start = Instant::now();
        let mut budget = Budget::default();
        let at = |millis: u64| start + Duration::from_millis(millis);
        // The window opens with the first line, 900 ms in, and lasts until 1,900 ms.
        let mut relayed = 0;
        for index in 0..270_u64 {
            let level = if index < 150 {
                Level::Warning
            } else {
                Level::Alert
            };
            let (relay, ended) = budget.admit(level, at(900 + index * 3));
            assert_eq!(ended, None, "line {index}");
            relayed += usize::from(relay);
        }
        assert_eq!(relayed, 200, "a hundred of each level");
        assert_eq!(budget.summary_due(), Some(at(1_900)));
        assert_eq!(
            budget.admit(Level::Warning, at(1_950)),
            (
                true,
                Some(HeldBack {
                    alerts: 20,
                    warnings: 50
                })
            )
        );
        assert_eq!(
            budget.summary_due(),
            None,
            "a new window, nothing held back"
        );
        assert_eq!(budget.take_summary(), None);
    }

    #[test]
    fn alerts_warnings_and_routine_lines_are_told_apart() {
        assert_eq!(
            level("[ALERT]    (1) : backend 'x' has no server available!"),
            Some(Level::Alert)
        );
        assert_eq!(
            level("[WARNING]  (1) : Server x/y is DOWN, reason: Layer4 timeout"),
            Some(Level::Warning)
        );
        assert_eq!(
            level("[WARNING]  (1) : Proxy x stopped (cumulated conns: FE: 0, BE: 0)."),
            None
        );
        assert_eq!(level("[NOTICE]   (1) : haproxy version is 2.6.12"), None);
    }
}
