//! Timestamps as exports write them, and calendar days, in UTC.
//!
//! Read: RFC 3339 (`2020-06-17T22:26:56.098086Z`, `+00:00` offsets, a space
//! for the `T`, no zone meaning UTC) as Sentry's API and Discover write
//! them, and Unix seconds (a JSON number or a decimal string, as Sentry's
//! ingest events carry them; values above 10^11 are read as milliseconds).
//! The civil-date arithmetic is Howard Hinnant's `days_from_civil`.

/// Milliseconds since the Unix epoch, UTC.
pub(crate) type Millis = i64;

const MS_PER_DAY: i64 = 86_400_000;
/// 0001-01-01 and 9999-12-31: the years a date is written with four digits.
const MIN_MS: i64 = -62_135_596_800_000;
const MAX_MS: i64 = 253_402_300_799_999;

/// A timestamp read from seconds (fractional allowed) or milliseconds.
pub(crate) fn from_number(value: f64) -> Option<Millis> {
    if !value.is_finite() {
        return None;
    }
    let ms = if value.abs() >= 1e11 {
        value
    } else {
        value * 1000.0
    };
    let ms = ms.round();
    (MIN_MS as f64..=MAX_MS as f64)
        .contains(&ms)
        .then_some(ms as i64)
}

/// A timestamp read from text: RFC 3339 or a number of seconds.
pub(crate) fn parse(text: &str) -> Option<Millis> {
    let text = text.trim();
    let bytes = text.as_bytes();
    if bytes.len() >= 10 && bytes[4] == b'-' && bytes[7] == b'-' {
        return parse_rfc3339(bytes);
    }
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
    {
        return text.parse::<f64>().ok().and_then(from_number);
    }
    None
}

fn digits(bytes: &[u8], at: usize, len: usize) -> Option<i64> {
    let part = bytes.get(at..at + len)?;
    part.iter().try_fold(0i64, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0'))
    })
}

fn parse_rfc3339(b: &[u8]) -> Option<Millis> {
    let year = digits(b, 0, 4)?;
    let month = digits(b, 5, 2)?;
    let day = digits(b, 8, 2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let mut ms = days_from_civil(year, month, day) * MS_PER_DAY;
    let mut at = 10;
    if at < b.len() && (b[at] == b'T' || b[at] == b't' || b[at] == b' ') {
        let hour = digits(b, at + 1, 2)?;
        if b.get(at + 3) != Some(&b':') {
            return None;
        }
        let minute = digits(b, at + 4, 2)?;
        at += 6;
        let mut second = 0;
        if b.get(at) == Some(&b':') {
            second = digits(b, at + 1, 2)?;
            at += 3;
        }
        if hour > 23 || minute > 59 || second > 60 {
            return None;
        }
        ms += ((hour * 60 + minute) * 60 + second) * 1000;
        if b.get(at) == Some(&b'.') {
            at += 1;
            let start = at;
            let mut fraction = 0i64;
            while at < b.len() && b[at].is_ascii_digit() {
                if at - start < 3 {
                    fraction = fraction * 10 + i64::from(b[at] - b'0');
                }
                at += 1;
            }
            if at == start {
                return None;
            }
            for _ in (at - start)..3 {
                fraction *= 10;
            }
            ms += fraction;
        }
        match b.get(at) {
            None => {}
            Some(b'Z' | b'z') if at + 1 == b.len() => {}
            Some(&sign @ (b'+' | b'-')) => {
                let hours = digits(b, at + 1, 2)?;
                let minutes = match b.get(at + 3) {
                    Some(b':') => digits(b, at + 4, 2)?,
                    _ => digits(b, at + 3, 2)?,
                };
                let offset = (hours * 60 + minutes) * 60_000;
                ms += if sign == b'+' { -offset } else { offset };
            }
            Some(_) => return None,
        }
    } else if at != b.len() {
        return None;
    }
    (MIN_MS..=MAX_MS).contains(&ms).then_some(ms)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number: (year, month, day).
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The day number of a timestamp.
pub(crate) fn day_of(ms: Millis) -> i64 {
    ms.div_euclid(MS_PER_DAY)
}

/// `YYYY-MM-DD` of a day number.
pub(crate) fn date(day: i64) -> String {
    let (y, m, d) = civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a timestamp.
pub(crate) fn instant(ms: Millis) -> String {
    let day = day_of(ms);
    let seconds = ms.rem_euclid(MS_PER_DAY) / 1000;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        date(day),
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// The Monday starting the ISO week of a day (1970-01-01 was a Thursday).
pub(crate) fn week_start(day: i64) -> i64 {
    day - (day + 3).rem_euclid(7)
}

/// The first day of the month of a day.
pub(crate) fn month_start(day: i64) -> i64 {
    let (y, m, _) = civil_from_days(day);
    days_from_civil(y, m, 1)
}

/// The first day of the year of a day.
pub(crate) fn year_start(day: i64) -> i64 {
    let (y, _, _) = civil_from_days(day);
    days_from_civil(y, 1, 1)
}

/// Milliseconds in a day, for spans.
pub(crate) const DAY_MS: f64 = MS_PER_DAY as f64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_exports_write() {
        let day = days_from_civil(2020, 6, 17) * MS_PER_DAY;
        let at = day + ((22 * 60 + 26) * 60 + 56) * 1000;
        assert_eq!(parse("2020-06-17T22:26:56Z"), Some(at));
        assert_eq!(parse("2020-06-17T22:26:56.098086Z"), Some(at + 98));
        assert_eq!(parse("2020-06-17T22:26:56+00:00"), Some(at));
        assert_eq!(parse("2020-06-17T23:26:56+01:00"), Some(at));
        assert_eq!(parse("2020-06-17 22:26:56"), Some(at));
        assert_eq!(parse("2020-06-17"), Some(day));
        assert_eq!(parse(&((at / 1000) as f64).to_string()), Some(at));
        assert_eq!(from_number(1_592_432_816.098), Some(at + 98));
        assert_eq!(from_number(1_592_432_816_098.0), Some(at + 98));
        for bad in [
            "2020-13-01",
            "2020-02-30",
            "yesterday",
            "2020-06-17T25:00:00Z",
            "",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn calendar_round_trips() {
        for day in [-719_468, -1, 0, 1, 11_016, 18_430, 2_932_896] {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
        }
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(instant(1_592_432_816_098), "2020-06-17T22:26:56Z");
        // 2020-06-17 was a Wednesday.
        assert_eq!(date(week_start(days_from_civil(2020, 6, 17))), "2020-06-15");
        assert_eq!(
            date(month_start(days_from_civil(2020, 6, 17))),
            "2020-06-01"
        );
    }
}
