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
pub const LIMIT: u64 = 1000;
/// Window length in milliseconds.
pub const WINDOW_MS: u64 = 60_000;

/// Milliseconds since the Unix epoch, read by the shell (the core has no clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixMillis(pub u64);

/// The window `now` falls in, and how far into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateWindow {
    /// Window number since the epoch.
    pub index: u64,
    /// Milliseconds elapsed in this window, `0..WINDOW_MS`.
    pub elapsed_ms: u64,
}

impl RateWindow {
    /// The window containing `now`.
    pub fn at(now: UnixMillis) -> RateWindow {
        RateWindow {
            index: now.0 / WINDOW_MS,
            elapsed_ms: now.0 % WINDOW_MS,
        }
    }

    /// Seconds until this window closes, rounded up (at least 1).
    pub fn seconds_left(&self) -> u64 {
        (WINDOW_MS - self.elapsed_ms).div_ceil(1000).max(1)
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
pub fn decide(window: RateWindow, current: u64, previous: u64) -> RateDecision {
    let w = u128::from(WINDOW_MS);
    let carried = u128::from(previous) * (w - u128::from(window.elapsed_ms));
    let budget = u128::from(LIMIT) * w;
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
    let w = u128::from(WINDOW_MS);
    let used = u128::from(previous) * (w - u128::from(window.elapsed_ms)) + u128::from(current) * w;
    (u128::from(LIMIT) * w).saturating_sub(used).div_euclid(w) as u64
}

/// Seconds until one more request would be admitted, if nothing else is sent.
fn retry_after(window: RateWindow, current: u64, previous: u64) -> u64 {
    let (w, limit) = (u128::from(WINDOW_MS), u128::from(LIMIT));
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
