//! The end of a mute: the instant a custom pattern stops being served, or an
//! exclusion of built-ins stops applying. The core has no clock, so an end
//! is compared with the `now` a shell hands in: nothing runs when an end
//! passes, the next request simply no longer lists the pattern (or lists
//! the built-in again), and its body, so its ETag, changes.
//!
//! Given as a date (`2026-12-31`: that day's first instant, UTC) or an RFC
//! 3339 time (`2026-12-31T18:00:00Z`, `2026-12-31T19:00:00+01:00`,
//! fractions of a second to the millisecond); always written back in UTC,
//! `2026-12-31T00:00:00Z`.

use crate::rate::UnixMillis;
use crate::store::{civil_from_days, date};

/// An instant after which something no longer applies ([`Until::has_passed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Until(pub UnixMillis);

/// Latest year accepted: four digits, as RFC 3339 writes one.
const MAX_YEAR: i64 = 9999;

impl Until {
    /// Whether the end has come at `now` (from that millisecond on, it no
    /// longer applies).
    pub fn has_passed(self, now: UnixMillis) -> bool {
        self.0 <= now
    }

    /// Reads `YYYY-MM-DD` or an RFC 3339 time (UTC `Z` or a numeric offset);
    /// `Err` says what is accepted.
    pub fn parse(text: &str) -> Result<Until, String> {
        parse(text.trim()).map(Until).ok_or_else(|| {
            format!(
                "{:?} is not a date: give YYYY-MM-DD (that day's start, UTC) or a time such as \
                 2026-12-31T18:00:00Z",
                text.chars().take(64).collect::<String>()
            )
        })
    }

    /// The stored form: milliseconds since the epoch, in decimal.
    pub(crate) fn stored(self) -> String {
        self.0.0.to_string()
    }

    /// Reads the stored form.
    pub(crate) fn from_stored(text: &str) -> Option<Until> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse().ok().map(|ms| Until(UnixMillis(ms)))
    }

    /// Its day, `YYYY-MM-DD` (UTC).
    pub fn date(self) -> String {
        date(self.0)
    }
}

impl std::fmt::Display for Until {
    /// RFC 3339 in UTC: `2026-12-31T00:00:00Z`, with `.mmm` when the
    /// instant is not on a whole second.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.0.0;
        let secs = ms / 1000 % 86_400;
        write!(
            f,
            "{}T{:02}:{:02}:{:02}",
            date(self.0),
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )?;
        if !ms.is_multiple_of(1000) {
            write!(f, ".{:03}", ms % 1000)?;
        }
        f.write_str("Z")
    }
}

impl serde::Serialize for Until {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Until {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Until, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Until::parse(&text).map_err(serde::de::Error::custom)
    }
}

fn digits(text: &str) -> Option<i64> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

fn parse(text: &str) -> Option<UnixMillis> {
    let (day, time) = match text.split_once(['T', 't']) {
        Some((day, time)) => (day, Some(time)),
        None => (text, None),
    };
    let mut parts = day.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (year, month, day) = (digits(y)?, digits(m)?, digits(d)?);
    if !(1970..=MAX_YEAR).contains(&year) || !(1..=12).contains(&month) || day < 1 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    // The day must exist: 2026-02-30 does not.
    if civil_from_days(days) != (year, month as u32, day as u32) {
        return None;
    }
    let mut ms = days * 86_400_000;
    if let Some(time) = time {
        let (clock, offset_ms) = match time.strip_suffix(['Z', 'z']) {
            Some(clock) => (clock, 0),
            None => {
                let at = time.rfind(['+', '-'])?;
                let (clock, offset) = time.split_at(at);
                let sign = if offset.starts_with('-') { -1 } else { 1 };
                let (h, m) = offset[1..].split_once(':')?;
                if h.len() != 2 || m.len() != 2 {
                    return None;
                }
                let (h, m) = (digits(h)?, digits(m)?);
                if h > 23 || m > 59 {
                    return None;
                }
                (clock, sign * (h * 3_600_000 + m * 60_000))
            }
        };
        let (whole, fraction) = match clock.split_once('.') {
            Some((whole, fraction)) => (whole, Some(fraction)),
            None => (clock, None),
        };
        let mut hms = whole.split(':');
        let (h, m, s) = (hms.next()?, hms.next()?, hms.next()?);
        if hms.next().is_some() || h.len() != 2 || m.len() != 2 || s.len() != 2 {
            return None;
        }
        let (h, m, s) = (digits(h)?, digits(m)?, digits(s)?);
        if h > 23 || m > 59 || s > 59 {
            return None;
        }
        let millis = match fraction {
            None => 0,
            Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|b| b.is_ascii_digit()) => {
                // To the millisecond: further digits are cut, not rounded.
                let f = format!("{f:0<3}");
                digits(&f[..3])?
            }
            Some(_) => return None,
        };
        ms += h * 3_600_000 + m * 60_000 + s * 1000 + millis - offset_ms;
    }
    u64::try_from(ms).ok().map(UnixMillis)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_read_to_the_millisecond_and_write_in_utc() {
        let cases = [
            ("1970-01-01", 0, "1970-01-01T00:00:00Z"),
            ("2026-12-31", 1_798_675_200_000, "2026-12-31T00:00:00Z"),
            (
                "2026-12-31T18:00:00Z",
                1_798_740_000_000,
                "2026-12-31T18:00:00Z",
            ),
            (
                "2026-12-31T19:00:00+01:00",
                1_798_740_000_000,
                "2026-12-31T18:00:00Z",
            ),
            (
                "2026-12-31t17:30:00-00:30",
                1_798_740_000_000,
                "2026-12-31T18:00:00Z",
            ),
            (
                "2024-02-29T00:00:00.5Z",
                1_709_164_800_500,
                "2024-02-29T00:00:00.500Z",
            ),
            (
                "2024-02-29T00:00:00.123456789Z",
                1_709_164_800_123,
                "2024-02-29T00:00:00.123Z",
            ),
        ];
        for (text, ms, written) in cases {
            let until = Until::parse(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(until, Until(UnixMillis(ms)), "{text}");
            assert_eq!(until.to_string(), written, "{text}");
            assert_eq!(Until::parse(written), Ok(until), "{written}");
            assert_eq!(Until::from_stored(&until.stored()), Some(until));
        }
    }

    #[test]
    fn anything_else_is_refused_with_what_is_accepted() {
        for bad in [
            "",
            "tomorrow",
            "2026-02-30",
            "2026-13-01",
            "2026-1-01",
            "1969-12-31",
            "12026-01-01",
            "2026-01-01T24:00:00Z",
            "2026-01-01T10:00Z",
            "2026-01-01T10:00:00",
            "2026-01-01T10:00:00+1:00",
            "2026-01-01T10:00:00.Z",
            "2026-01-01T10:00:00.1234567890Z",
            "+2026-01-01",
        ] {
            let refused = Until::parse(bad).expect_err(bad);
            assert!(refused.contains("YYYY-MM-DD"), "{refused}");
        }
        assert_eq!(Until::from_stored("12a"), None);
        assert_eq!(Until::from_stored(""), None);
    }

    #[test]
    fn an_end_has_passed_from_its_own_millisecond_on() {
        let until = Until(UnixMillis(1000));
        assert!(!until.has_passed(UnixMillis(999)));
        assert!(until.has_passed(UnixMillis(1000)));
        assert!(until.has_passed(UnixMillis(1001)));
    }
}
