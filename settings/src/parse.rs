//! Value parsers the layers' declarations share (`value_parser = parse::…`): each refuses a value
//! with a reason that names what is wanted and, for anything but a secret, what was given.

use std::ops::RangeInclusive;

use crate::Secret;

/// A whole number in `range`, of `unit` (`"seconds"`, or `""` for a bare count).
pub fn whole(
    range: RangeInclusive<u64>,
    unit: &'static str,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |raw| {
        raw.trim()
            .parse::<u64>()
            .ok()
            .filter(|number| range.contains(number))
            .ok_or_else(|| {
                let of = if unit.is_empty() {
                    String::new()
                } else {
                    format!(" of {unit}")
                };
                format!(
                    "`{raw}` must be a whole number{of} from {} to {}",
                    range.start(),
                    range.end()
                )
            })
    }
}

/// An on/off setting: `true`/`false`, `1`/`0`, `yes`/`no` or `on`/`off`, any case.
///
/// # Errors
/// Any other word.
pub fn switch(raw: &str) -> Result<bool, String> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(format!("`{raw}` is not true or false")),
    }
}

/// A secret of at least `min_chars` characters once trimmed; the reason never echoes it.
pub fn secret(
    min_chars: usize,
) -> impl Fn(&str) -> Result<Secret, String> + Clone + Send + Sync + 'static {
    move |raw| {
        let trimmed = raw.trim();
        if trimmed.chars().count() < min_chars {
            return Err(format!("must be at least {min_chars} characters"));
        }
        Ok(Secret::new(trimmed))
    }
}

/// Text with the white space around it removed (paths, names).
///
/// # Errors
/// Never; a parser's signature.
pub fn trimmed(raw: &str) -> Result<String, String> {
    Ok(raw.trim().to_owned())
}

/// The entries of a comma-separated list, trimmed, empty ones dropped.
#[must_use]
pub fn entries(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_outside_the_range_are_refused_naming_it() {
        let seconds = whole(1..=3600, "seconds");
        assert_eq!(seconds(" 30 "), Ok(30));
        assert_eq!(
            seconds("0"),
            Err("`0` must be a whole number of seconds from 1 to 3600".to_owned())
        );
        assert_eq!(
            whole(1..=20, "")("x"),
            Err("`x` must be a whole number from 1 to 20".to_owned())
        );
    }

    #[test]
    fn switches_read_the_usual_words_and_secrets_never_echo() {
        assert_eq!(switch("On"), Ok(true));
        assert_eq!(switch("no"), Ok(false));
        assert!(switch("maybe").is_err());
        let refused = secret(16)("short-secret").err().unwrap_or_default();
        assert_eq!(refused, "must be at least 16 characters");
        assert_eq!(entries(" a, ,b ,"), vec!["a".to_owned(), "b".to_owned()]);
    }
}
