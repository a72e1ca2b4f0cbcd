//! UTC calendar dates: `YYYY-MM-DD`, "last month" and RFC 3339 instants, over the `time` crate.
//!
//! The chat planner turns "from last month" into a date range, the demo API filters on dates,
//! form validation checks `format: date` and receipts print when a page was submitted; all of
//! them use this module. The calendar itself (month lengths, leap years, day counting) is
//! `time::Date`; [`CivilDate`] keeps plain public fields so tests and constants can spell a date
//! as a literal. Everything is UTC: the chat has no per-person time zone yet. `time` covers the
//! years -9999 to 9999; an instant outside them clamps to the nearest end.

use std::fmt;

use time::{Date, Month};

const MS_PER_DAY: i64 = 86_400_000;
/// The Julian day number of 1970-01-01.
const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;

/// A calendar date (UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CivilDate {
    /// The year, e.g. 2026.
    pub year: i32,
    /// The month, 1–12.
    pub month: u32,
    /// The day of the month, 1–31.
    pub day: u32,
}

impl CivilDate {
    /// The date `year-month-day`, if it exists.
    #[must_use]
    pub fn new(year: i32, month: u32, day: u32) -> Option<Self> {
        let month = Month::try_from(u8::try_from(month).ok()?).ok()?;
        let date = Date::from_calendar_date(year, month, u8::try_from(day).ok()?).ok()?;
        Some(Self::from_date(date))
    }

    /// The UTC date of a unix-millisecond instant.
    #[must_use]
    pub fn from_unix_ms(unix_ms: i64) -> Self {
        Self::from_days(unix_ms.div_euclid(MS_PER_DAY))
    }

    /// Midnight UTC at the start of this date, in unix milliseconds.
    #[must_use]
    pub fn start_unix_ms(self) -> i64 {
        self.days() * MS_PER_DAY
    }

    /// Parses `YYYY-MM-DD`, ignoring surrounding whitespace.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::parse_exact(text.trim())
    }

    /// Parses exactly `YYYY-MM-DD`: ten ASCII characters, digits and two dashes, naming a day
    /// that exists (`2026-02-29` does not).
    #[must_use]
    pub fn parse_exact(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        Self::new(
            i32::try_from(digits(&bytes[0..4])?).ok()?,
            digits(&bytes[5..7])?,
            digits(&bytes[8..10])?,
        )
    }

    /// The first day of this date's month.
    #[must_use]
    pub fn first_of_month(self) -> Self {
        Self { day: 1, ..self }
    }

    /// The first day of the previous month.
    #[must_use]
    pub fn first_of_previous_month(self) -> Self {
        if self.month == 1 {
            Self {
                year: self.year - 1,
                month: 12,
                day: 1,
            }
        } else {
            Self {
                month: self.month - 1,
                day: 1,
                ..self
            }
        }
    }

    /// The date `days` later (earlier when negative).
    #[must_use]
    pub fn add_days(self, days: i64) -> Self {
        Self::from_days(self.days().saturating_add(days))
    }

    fn from_date(date: Date) -> Self {
        Self {
            year: date.year(),
            month: u32::from(u8::from(date.month())),
            day: u32::from(date.day()),
        }
    }

    /// The date `days` after 1970-01-01, clamped to the years `time` covers.
    fn from_days(days: i64) -> Self {
        let julian = days.saturating_add(UNIX_EPOCH_JULIAN_DAY);
        let date = i32::try_from(julian)
            .ok()
            .and_then(|julian| Date::from_julian_day(julian).ok())
            .unwrap_or(if julian < 0 { Date::MIN } else { Date::MAX });
        Self::from_date(date)
    }

    /// Days since 1970-01-01. A literal whose day runs past its month's end counts on into the
    /// next month, as the calendar arithmetic always has.
    fn days(self) -> i64 {
        let month = u8::try_from(self.month.clamp(1, 12))
            .ok()
            .and_then(|month| Month::try_from(month).ok())
            .unwrap_or(Month::January);
        let year = self.year.clamp(Date::MIN.year(), Date::MAX.year());
        let first = Date::from_calendar_date(year, month, 1).unwrap_or(Date::MIN);
        i64::from(first.to_julian_day()) - UNIX_EPOCH_JULIAN_DAY + i64::from(self.day) - 1
    }
}

impl fmt::Display for CivilDate {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{:04}-{:02}-{:02}",
            self.year, self.month, self.day
        )
    }
}

/// The number an all-digit ASCII run spells; `None` for anything else (no signs, no spaces).
fn digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// An instant as RFC 3339 UTC text with second precision, e.g. `2026-10-14T09:30:00Z`.
#[must_use]
pub fn iso_datetime(unix_ms: i64) -> String {
    let (date, hours, minutes, seconds) = clock(unix_ms);
    format!("{date}T{hours:02}:{minutes:02}:{seconds:02}Z")
}

/// An instant as `YYYY-MM-DD HH:MM UTC`, as receipts and the runs pages show it.
#[must_use]
pub fn format_utc(unix_ms: i64) -> String {
    let (date, hours, minutes, _) = clock(unix_ms);
    format!("{date} {hours:02}:{minutes:02} UTC")
}

/// The UTC date of an instant and its time of day in hours, minutes and seconds.
fn clock(unix_ms: i64) -> (CivilDate, i64, i64, i64) {
    let seconds_of_day = unix_ms.rem_euclid(MS_PER_DAY) / 1000;
    (
        CivilDate::from_unix_ms(unix_ms),
        seconds_of_day / 3600,
        seconds_of_day / 60 % 60,
        seconds_of_day % 60,
    )
}

/// Parses `YYYY-MM-DD` (midnight UTC) or an RFC 3339 date-time (`2026-11-25T01:02:03Z`, or with
/// an offset such as `+02:00`) into unix ms; fractions of a second are dropped.
#[must_use]
pub fn parse_instant(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Some(date) = CivilDate::parse(text) {
        return Some(date.start_unix_ms());
    }
    let instant =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    instant.unix_timestamp().checked_mul(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_through_unix_milliseconds() -> Result<(), String> {
        for (text, unix_ms) in [
            ("1970-01-01", 0),
            ("2000-02-29", 951_782_400_000),
            ("2026-11-25", 1_795_564_800_000),
            ("1969-12-31", -86_400_000),
            ("1900-03-01", -2_203_891_200_000),
            ("0000-01-01", -62_167_219_200_000),
        ] {
            let date = CivilDate::parse(text).ok_or(format!("{text} did not parse"))?;
            assert_eq!(date.start_unix_ms(), unix_ms, "{text}");
            assert_eq!(CivilDate::from_unix_ms(unix_ms + 5), date, "{text}");
            assert_eq!(
                CivilDate::from_unix_ms(unix_ms - 1),
                date.add_days(-1),
                "{text}"
            );
            assert_eq!(date.to_string(), text);
        }
        Ok(())
    }

    #[test]
    fn every_day_of_four_centuries_matches_the_day_count() -> Result<(), String> {
        // 1900 is not a leap year, 2000 is: a walk over 1900–2300 crosses both rules.
        let mut date = CivilDate::new(1900, 1, 1).ok_or("bad date")?;
        let mut unix_ms = date.start_unix_ms();
        while date.year < 2300 {
            let next = date.add_days(1);
            assert_eq!(next.start_unix_ms(), unix_ms + MS_PER_DAY, "{date}");
            assert_eq!(CivilDate::parse(&next.to_string()), Some(next));
            date = next;
            unix_ms += MS_PER_DAY;
        }
        Ok(())
    }

    #[test]
    fn instants_print_and_parse_as_rfc_3339_utc() {
        assert_eq!(
            iso_datetime(1_795_564_800_000 + 3_723_000),
            "2026-11-25T01:02:03Z"
        );
        assert_eq!(
            parse_instant("2026-11-25T01:02:03Z"),
            Some(1_795_564_800_000 + 3_723_000)
        );
        assert_eq!(parse_instant("2026-11-25"), Some(1_795_564_800_000));
        assert_eq!(parse_instant("2026-11-25T25:00:00Z"), None);
        assert_eq!(
            parse_instant("2026-11-25T03:02:03.9+02:00"),
            parse_instant("2026-11-25T01:02:03Z")
        );
        assert_eq!(parse_instant("last tuesday"), None);
    }

    #[test]
    fn receipts_show_the_minute_in_utc() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(1_795_000_000_000), "2026-11-18 11:06 UTC");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(-60_000), "1969-12-31 23:59 UTC");
    }

    #[test]
    fn impossible_or_misspelt_dates_do_not_parse() {
        for text in [
            "2026-02-29",
            "1900-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-01-00",
            "2026-1-01",
            "2026-01-1",
            "2026/01/01",
            "+202-01-01",
            "2026-+1-01",
            "２０２６-01-01",
            "yesterday",
            "2026-04-31",
        ] {
            assert_eq!(CivilDate::parse(text), None, "{text}");
        }
        assert_eq!(
            CivilDate::parse(" 2024-02-29\n"),
            CivilDate::new(2024, 2, 29)
        );
        assert_eq!(CivilDate::parse_exact(" 2024-02-29"), None);
        assert_eq!(
            CivilDate::parse_exact("2000-02-29"),
            CivilDate::new(2000, 2, 29)
        );
    }

    #[test]
    fn the_previous_month_wraps_the_year() -> Result<(), String> {
        let january = CivilDate::new(2026, 1, 17).ok_or("bad date")?;
        assert_eq!(january.first_of_previous_month().to_string(), "2025-12-01");
        let march = CivilDate::new(2024, 3, 31).ok_or("bad date")?;
        assert_eq!(march.first_of_previous_month().to_string(), "2024-02-01");
        assert_eq!(march.add_days(-31).to_string(), "2024-02-29");
        assert_eq!(march.first_of_month().to_string(), "2024-03-01");
        Ok(())
    }

    #[test]
    fn instants_beyond_the_calendar_clamp_instead_of_wrapping() {
        assert_eq!(CivilDate::from_unix_ms(i64::MAX).year, 9999);
        assert_eq!(CivilDate::from_unix_ms(i64::MIN).year, -9999);
    }
}
