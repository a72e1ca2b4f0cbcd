//! The filters a template gets, each bounded in what it builds.
//!
//! Most builtin filters give back at most what they were given. The few that can give more are
//! checked before they run — `replace` (every match becomes the replacement), `join` (the joiner
//! between every pair), `indent` (a width per line), `escape` (up to six bytes per byte) and
//! `string` (a list's quotes and escapes) — and refused past [`MAX_VALUE_BYTES`]. Those that
//! build from arguments alone or are only for debugging (`batch` and `slice` pad to any count,
//! `chain` doubles a list each time it is applied, `format` pads to any width, `pprint`) are
//! removed, as is the `namespace` global, which would carry a value across loop iterations.

use minijinja::{
    filters,
    value::{Kwargs, StringInput},
    Environment, Error, ErrorKind, State, Value,
};

/// The largest value one filter may build.
pub const MAX_VALUE_BYTES: usize = 4 * 1024 * 1024;

/// How deep [`approximate_len`] looks into nested lists and maps before taking a value as too big.
const MAX_DEPTH: usize = 64;

const REMOVED_FILTERS: [&str; 5] = ["batch", "slice", "chain", "format", "pprint"];

/// Replaces the builtin filters that can grow a value by bounded ones, and removes the rest.
pub fn install(environment: &mut Environment<'static>) {
    for name in REMOVED_FILTERS {
        environment.remove_filter(name);
    }
    environment.remove_global("namespace");
    environment.add_filter("replace", replace);
    environment.add_filter("join", join);
    environment.add_filter("indent", indent);
    environment.add_filter("escape", escape);
    environment.add_filter("e", escape);
    environment.add_filter("string", string);
}

fn replace(
    state: &State,
    value: StringInput<'_>,
    from: StringInput<'_>,
    to: StringInput<'_>,
) -> Result<Value, Error> {
    let text = value.as_str();
    let matches = if from.as_str().is_empty() {
        text.chars().count().saturating_add(1)
    } else {
        text.matches(from.as_str()).count()
    };
    within(
        "replace",
        text.len()
            .saturating_add(matches.saturating_mul(to.as_str().len())),
    )?;
    filters::replace(state, value, from, to)
}

fn join(state: &State, value: &Value, joiner: Option<StringInput<'_>>) -> Result<Value, Error> {
    let joiner_len = joiner.as_ref().map_or(0, |joiner| joiner.as_str().len());
    let mut total = 0usize;
    if let Ok(items) = value.try_iter() {
        for item in items {
            total = total
                .saturating_add(approximate_len(&item, 0))
                .saturating_add(joiner_len);
            within("join", total)?;
        }
    }
    filters::join(state, value, joiner)
}

fn indent(
    value: StringInput<'_>,
    width: Option<usize>,
    first: Option<bool>,
    blank: Option<bool>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let spaces = match width {
        Some(width) => width,
        None => kwargs.get::<Option<usize>>("width")?.unwrap_or(4),
    };
    let lines = value.as_str().matches('\n').count().saturating_add(1);
    within(
        "indent",
        value
            .as_str()
            .len()
            .saturating_add(lines.saturating_mul(spaces)),
    )?;
    filters::indent(value, width, first, blank, kwargs)
}

fn escape(state: &State, value: &Value) -> Result<Value, Error> {
    // `&` becomes `&amp;`, `"` `&quot;`: at most six bytes for one.
    within("escape", approximate_len(value, 0).saturating_mul(6))?;
    filters::escape(state, value)
}

fn string(state: &State, value: &Value) -> Result<Value, Error> {
    // A list prints its strings quoted and escaped: at most twice each, plus the punctuation.
    within("string", approximate_len(value, 0).saturating_mul(2))?;
    filters::string(state, value)
}

/// Refuses a result of `bytes` past [`MAX_VALUE_BYTES`].
fn within(filter: &str, bytes: usize) -> Result<(), Error> {
    if bytes > MAX_VALUE_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "`{filter}` would build more than {} MiB; filter fewer or shorter values",
                MAX_VALUE_BYTES / (1024 * 1024)
            ),
        ));
    }
    Ok(())
}

/// About how many bytes `value` prints as, counted only as far as past [`MAX_VALUE_BYTES`].
fn approximate_len(value: &Value, depth: usize) -> usize {
    if let Some(text) = value.as_str() {
        return text.len();
    }
    if depth > MAX_DEPTH {
        return usize::MAX;
    }
    let Ok(items) = value.try_iter() else {
        // Numbers, booleans, none: a few bytes.
        return 24;
    };
    let is_map = value.kind() == minijinja::value::ValueKind::Map;
    let mut total = 2usize;
    for item in items {
        let member = if is_map {
            value.get_item(&item).unwrap_or_default()
        } else {
            Value::UNDEFINED
        };
        total = total
            .saturating_add(approximate_len(&item, depth + 1))
            .saturating_add(if is_map {
                approximate_len(&member, depth + 1)
            } else {
                0
            })
            .saturating_add(4);
        if total > MAX_VALUE_BYTES {
            break;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::util::templates::render_str;

    fn refusal(source: &str, context: serde_json::Value) -> Option<String> {
        render_str(source, context, 10_000_000)
            .err()
            .map(|error| error.to_string())
    }

    #[test]
    fn filters_that_would_build_megabytes_are_refused_before_they_run() {
        let big = "&".repeat(1_000_000);
        for (source, says) in [
            (
                "{{ data.big | replace('&', data.big) | length }}",
                "`replace` would build more than 4 MiB",
            ),
            (
                "{{ data.big | replace('', 'xxxxx') | length }}",
                "`replace` would build",
            ),
            (
                "{{ data.rows | join(data.big) | length }}",
                "`join` would build",
            ),
            (
                "{{ data.lines | indent(100, blank=true) | length }}",
                "`indent` would build",
            ),
            ("{{ data.big | escape | length }}", "`escape` would build"),
            (
                "{{ [data.big, data.big, data.big] | string | length }}",
                "`string` would build",
            ),
        ] {
            let context =
                json!({"data": {"big": big, "lines": "\n".repeat(100_000), "rows": vec![0; 10]}});
            let found = refusal(source, context);
            assert!(
                found.as_deref().is_some_and(|text| text.contains(says)),
                "{source}: {found:?}"
            );
        }
    }

    #[test]
    fn filters_that_pad_or_carry_values_are_gone() {
        for source in [
            "{{ [1] | batch(100000000, 0) | length }}",
            "{{ [1] | slice(100000000) | length }}",
            "{{ [1] | chain([1]) | length }}",
            "{{ '%999999999s' | format('x') }}",
            "{{ data | pprint }}",
        ] {
            let found = refusal(source, json!({"data": {}}));
            assert!(
                found
                    .as_deref()
                    .is_some_and(|text| text.contains("unknown filter")),
                "{source}: {found:?}"
            );
        }
    }

    #[test]
    fn everyday_uses_of_the_bounded_filters_still_work() -> Result<(), Error> {
        let context = json!({"data": {"names": ["Ada", "Linus"], "note": "a\nb", "who": "R&D"}});
        assert_eq!(
            render_str(
                "{{ data.names | join(', ') }}|{{ data.note | indent(2) }}|{{ data.who | e }}|{{ data.who | replace('&', ' and ') }}|{{ data.names | string }}",
                context,
                10_000,
            )?,
            "Ada, Linus|a\n  b|R&amp;D|R and D|[\"Ada\", \"Linus\"]"
        );
        Ok(())
    }
}
