//! UTC calendar dates without a date crate: enough for "last month", `YYYY-MM-DD` filters and
//! the pending-question "date" fit check.
//!
//! The planner turns "from last month" into a date range and the demo API filters on dates, so
//! both need civil-date arithmetic that is exact and deterministic. The conversions are Howard
//! Hinnant's `days_from_civil` / `civil_from_days` algorithms over the proleptic Gregorian
//! calendar. Everything is UTC: the chat has no per-person time zone yet.

use std::fmt;

const MS_PER_DAY: i64 = 86_400_000;

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
        let date = Self { year, month, day };
        ((1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)).then_some(date)
    }

    /// The UTC date of a unix-millisecond instant.
    #[must_use]
    pub fn from_unix_ms(unix_ms: i64) -> Self {
        civil_from_days(unix_ms.div_euclid(MS_PER_DAY))
    }

    /// Midnight UTC at the start of this date, in unix milliseconds.
    #[must_use]
    pub fn start_unix_ms(self) -> i64 {
        days_from_civil(self) * MS_PER_DAY
    }

    /// Parses `YYYY-MM-DD`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let mut parts = text.splitn(3, '-');
        let year = parts.next()?;
        let month = parts.next()?;
        let day = parts.next()?;
        if year.len() != 4 || month.len() != 2 || day.len() != 2 {
            return None;
        }
        Self::new(year.parse().ok()?, month.parse().ok()?, day.parse().ok()?)
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
        civil_from_days(days_from_civil(self) + days)
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

/// An instant as RFC 3339 UTC text with second precision, e.g. `2026-10-14T09:30:00Z`.
#[must_use]
pub fn iso_datetime(unix_ms: i64) -> String {
    let date = CivilDate::from_unix_ms(unix_ms);
    let seconds_of_day = unix_ms.rem_euclid(MS_PER_DAY) / 1000;
    format!(
        "{date}T{:02}:{:02}:{:02}Z",
        seconds_of_day / 3600,
        seconds_of_day / 60 % 60,
        seconds_of_day % 60
    )
}

/// Parses `YYYY-MM-DD` (midnight UTC) or RFC 3339 UTC `YYYY-MM-DDTHH:MM:SSZ` into unix ms.
#[must_use]
pub fn parse_instant(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Some(date) = CivilDate::parse(text) {
        return Some(date.start_unix_ms());
    }
    let (date, time) = text.split_once('T')?;
    let date = CivilDate::parse(date)?;
    let time = time.strip_suffix('Z')?;
    let mut parts = time.split(':');
    let hours: i64 = parts.next()?.parse().ok()?;
    let minutes: i64 = parts.next()?.parse().ok()?;
    let seconds: i64 = parts
        .next()
        .unwrap_or("0")
        .split('.')
        .next()?
        .parse()
        .ok()?;
    if parts.next().is_some() || hours > 23 || minutes > 59 || seconds > 60 {
        return None;
    }
    Some(date.start_unix_ms() + ((hours * 60 + minutes) * 60 + seconds) * 1000)
}

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a civil date.
fn days_from_civil(date: CivilDate) -> i64 {
    let year = i64::from(date.year) - i64::from(date.month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(date.month);
    let day_of_year =
        (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(date.day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The civil date `days` after 1970-01-01.
fn civil_from_days(days: i64) -> CivilDate {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    CivilDate {
        year: i32::try_from(year).unwrap_or(i32::MAX),
        month: u32::try_from(month).unwrap_or(1),
        day: u32::try_from(day).unwrap_or(1),
    }
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
        ] {
            let date = CivilDate::parse(text).ok_or(format!("{text} did not parse"))?;
            assert_eq!(date.start_unix_ms(), unix_ms, "{text}");
            assert_eq!(CivilDate::from_unix_ms(unix_ms + 5), date, "{text}");
            assert_eq!(date.to_string(), text);
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
        assert_eq!(parse_instant("last tuesday"), None);
    }

    #[test]
    fn impossible_dates_do_not_parse() {
        for text in [
            "2026-02-29",
            "2026-13-01",
            "2026-1-01",
            "yesterday",
            "2026-04-31",
        ] {
            assert_eq!(CivilDate::parse(text), None, "{text}");
        }
    }

    #[test]
    fn the_previous_month_wraps_the_year() -> Result<(), String> {
        let january = CivilDate::new(2026, 1, 17).ok_or("bad date")?;
        assert_eq!(january.first_of_previous_month().to_string(), "2025-12-01");
        let march = CivilDate::new(2024, 3, 31).ok_or("bad date")?;
        assert_eq!(march.first_of_previous_month().to_string(), "2024-02-01");
        assert_eq!(march.add_days(-31).to_string(), "2024-02-29");
        Ok(())
    }
}
