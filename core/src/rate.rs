//! The rate limit: 1000 requests per minute per key, as a pure decision.
//!
//! **Algorithm: sliding-window counter.** Time is cut into fixed one-minute
//! windows; each key has one counter per window. A request is admitted when
//!
//! ```text
//! previous × (W − elapsed) / W  +  current  ≤  limit
//! ```
//!
//! where `current` already includes this request, `previous` is the count of
//! the window before and `elapsed` is how far into the current window `now`
//! is. The arithmetic is in integer milliseconds: no float, same answer on
//! every platform.
//!
//! **Concurrency.** The shell first increments the current counter with the
//! store's atomic increment (Spin's `wasi:keyvalue/atomics`, Redis `INCRBY`)
//! and hands the new value here. Concurrent requests get distinct values, so
//! exactly the ones whose value fits are admitted: never more than the limit.
//! A refused request and a `304` are refunded (increment by −1), so the
//! counter holds admitted requests only and `Retry-After` is exact for a client
//! that waits.
//!
//! **Worst-case burst.** A fixed window lets 2 × limit through in an instant
//! (limit at the end of one window, limit at the start of the next). Here the
//! previous window's count decays linearly, so within any span of `d` seconds
//! at most `limit × (1 + d/60)` requests are admitted: 1016 in one second,
//! 1500 in thirty. Only a full 60-second span can approach 2 × limit, and only
//! when the whole previous minute's quota was spent in its last instant.

/// Requests admitted per window per key.
pub const RATE_LIMIT: u64 = 1000;
/// Window length in milliseconds.
pub const RATE_WINDOW_MS: u64 = 60_000;

/// How long a store that can expire keys (Redis) may keep a `rate` record
/// after its last write: a window's counter is read until the end of the
/// next window, at most two windows after its last increment, so three is
/// safe. The shells that can set an expiry use it as a second line behind
/// `stale_windows`, which works on every store.
pub const RATE_COUNTER_TTL_MS: u64 = 3 * RATE_WINDOW_MS;

/// The windows whose counters are no longer read, to delete when window
/// `now` gets a key's first request. `last` is the window of that key's
/// previous first request (its `rate/<hash>/last` record), if known.
///
/// Why this catches every stale window whatever the gaps between requests:
/// a counter exists only for a window that had a first request, and each
/// first request deletes the counters of the window of the previous first
/// request and the one before it, unless they are still read (the current
/// or the previous window). Every older counter was deleted by an earlier
/// first request, by the same rule. So at most two deletes per key and
/// window, and no key keeps more than its current and previous counters
/// (and `last`). Without `last` (a store written before it existed, or an
/// expired one) it falls back to the window two back.
pub(crate) fn stale_windows(now: u64, last: Option<u64>) -> Vec<u64> {
    let candidates = match last {
        Some(last) => [Some(last), last.checked_sub(1)],
        None => [now.checked_sub(2), None],
    };
    candidates
        .into_iter()
        .flatten()
        .filter(|window| window.saturating_add(1) < now)
        .collect()
}

/// What to add to a key's `last` record so that it reads `now` (it moves
/// forward only: another instance whose clock runs ahead may have moved it
/// further already).
pub(crate) fn advance_last_window(now: u64, last: Option<u64>) -> Option<i64> {
    let last = last.unwrap_or(0);
    (last < now).then(|| i64::try_from(now - last).unwrap_or(i64::MAX))
}

/// Milliseconds since the Unix epoch, read by the shell (the core has no clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixMillis(pub u64);

/// The window `now` falls in, and how far into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateWindow {
    /// Window number since the epoch.
    pub index: u64,
    /// Milliseconds elapsed in this window, `0..RATE_WINDOW_MS`.
    pub elapsed_ms: u64,
}

impl RateWindow {
    /// The window containing `now`.
    pub fn at(now: UnixMillis) -> RateWindow {
        RateWindow {
            index: now.0 / RATE_WINDOW_MS,
            elapsed_ms: now.0 % RATE_WINDOW_MS,
        }
    }

    /// Seconds until this window closes, rounded up (at least 1).
    pub fn seconds_left(&self) -> u64 {
        (RATE_WINDOW_MS - self.elapsed_ms).div_ceil(1000).max(1)
    }
}

/// What a key may still send, as the `RateLimit` header says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    /// Requests still admitted right now.
    pub remaining: u64,
    /// Seconds until the window closes.
    pub reset: u64,
}

impl RateWindow {
    /// The allowance in this window with `remaining` requests left.
    pub fn allowance(&self, remaining: u64) -> Allowance {
        Allowance {
            remaining,
            reset: self.seconds_left(),
        }
    }
}

/// The outcome of one request against the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateDecision {
    /// Admitted; `remaining` more would be admitted now.
    Admitted {
        /// Requests still admitted right now.
        remaining: u64,
    },
    /// Over the limit; admitted again after `retry_after` seconds if idle.
    Limited {
        /// Seconds to wait (at least 1).
        retry_after: u64,
    },
}

/// Decides one request. `current` is the current window's counter after this
/// request's increment; `previous` is the previous window's counter.
pub fn rate_decision(window: RateWindow, current: u64, previous: u64) -> RateDecision {
    let w = u128::from(RATE_WINDOW_MS);
    let carried = u128::from(previous) * (w - u128::from(window.elapsed_ms));
    let budget = u128::from(RATE_LIMIT) * w;
    let used = carried + u128::from(current) * w;
    if used <= budget {
        let remaining = ((budget - used) / w) as u64;
        RateDecision::Admitted { remaining }
    } else {
        // This request is refunded, so the counter goes back to current − 1.
        RateDecision::Limited {
            retry_after: retry_after(window, current.saturating_sub(1), previous),
        }
    }
}

/// Requests still admitted at `window` given the counters (for responses
/// whose own request was refunded, such as a 304).
pub(crate) fn remaining(window: RateWindow, current: u64, previous: u64) -> u64 {
    let w = u128::from(RATE_WINDOW_MS);
    let used = u128::from(previous) * (w - u128::from(window.elapsed_ms)) + u128::from(current) * w;
    (u128::from(RATE_LIMIT) * w)
        .saturating_sub(used)
        .div_euclid(w) as u64
}

/// Seconds until one more request would be admitted, if nothing else is sent.
fn retry_after(window: RateWindow, current: u64, previous: u64) -> u64 {
    let (w, limit) = (u128::from(RATE_WINDOW_MS), u128::from(RATE_LIMIT));
    let (current, previous) = (u128::from(current), u128::from(previous));
    let elapsed = u128::from(window.elapsed_ms);
    let left = w - elapsed;
    // Still in this window: need previous × (left − Δ) ≤ (limit − current − 1) × W.
    if current < limit && previous > 0 {
        let allowed = (limit - current - 1) * w;
        let wait = (previous * left).saturating_sub(allowed).div_ceil(previous);
        if wait < left {
            return to_seconds(wait);
        }
    }
    // In the next window, this window's count decays: need
    // current × (W − e′) + W ≤ limit × W.
    let wait_next = if current == 0 {
        0
    } else {
        (current * w + w)
            .saturating_sub(limit * w)
            .div_ceil(current)
    };
    to_seconds(left + wait_next)
}

fn to_seconds(ms: u128) -> u64 {
    (ms.div_ceil(1000) as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_windows_whatever_the_gaps() {
        // First requests in windows 10, 11, 14, 15, 40: what each deletes.
        assert_eq!(stale_windows(10, None), vec![8]);
        // 10 is still read (the previous window); 9 may hold a count kept
        // as 10's previous window.
        assert_eq!(stale_windows(11, Some(10)), vec![9]);
        assert_eq!(stale_windows(14, Some(11)), vec![11, 10]);
        assert_eq!(stale_windows(15, Some(14)), vec![13]);
        assert_eq!(stale_windows(40, Some(15)), vec![15, 14]);
        // A clock behind another instance's: nothing current is deleted.
        assert_eq!(stale_windows(40, Some(41)), Vec::<u64>::new());
        assert_eq!(stale_windows(40, Some(40)), Vec::<u64>::new());
        assert_eq!(stale_windows(1, None), Vec::<u64>::new());
        assert_eq!(stale_windows(0, Some(0)), Vec::<u64>::new());
    }

    #[test]
    fn last_window_moves_forward_only() {
        assert_eq!(advance_last_window(29_000_000, None), Some(29_000_000));
        assert_eq!(advance_last_window(14, Some(11)), Some(3));
        assert_eq!(advance_last_window(14, Some(14)), None);
        assert_eq!(advance_last_window(14, Some(15)), None);
    }
}
