//! Templates written by callers and operators, rendered with bounded work.
//!
//! An ask's `prompt` (`POST /api/asks`, MCP `ask_person`), a workflow's prompts and a YAML
//! workflow's templates are minijinja source that someone other than this code wrote. minijinja
//! alone will run `{% for a in range(99999) %}{% for b in range(99999) %}…` to the end, on
//! whatever thread called it. Here every render gets [`FUEL`] (one unit per instruction; out of
//! fuel is an error) and its output goes through a writer that refuses to grow past a cap, so
//! a template that loops or writes without end fails fast instead.
//!
//! What fuel cannot see is one instruction's own cost: a value built in memory and never written
//! out. [`compile`] refuses the constructs that could build one without bound before the template
//! runs (`source_check`), and the filters that can grow a value are checked or removed
//! (`filters`), so every value a template builds stays within a fixed multiple of its inputs.
//!
//! A template that writes a URL ([`url_environment`], a YAML `http` step's `url`) percent-encodes
//! every value it prints, as auto-escaping does for HTML: a state value `../admin?x=1#y` becomes
//! `..%2Fadmin%3Fx%3D1%23y`, one path segment or query value, so an answer cannot reach another
//! path or query of an allowed host. A value that is exactly `.` or `..` is refused (no encoding
//! keeps a URL parser from reading it as a dot segment). `{{ value | safe }}` inserts a value as
//! it is, for a template that means to insert a path or a whole URL.

mod filters;
mod source_check;

use std::io;

use minijinja::{
    escape_formatter, AutoEscape, Environment, ErrorKind, Output, State, Template,
    UndefinedBehavior, Value,
};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Serialize;

/// Instructions one render may execute: a loop over a few thousand rows with a few lookups
/// each fits many times over; a nested `range` does not.
pub const FUEL: u64 = 200_000;

/// A strict environment (an unknown variable is an error, not an empty string) with [`FUEL`] and
/// bounded filters. Compile templates for it with [`compile`].
#[must_use]
pub fn environment() -> Environment<'static> {
    let mut environment = Environment::new();
    environment.set_undefined_behavior(UndefinedBehavior::Strict);
    environment.set_fuel(Some(FUEL));
    filters::install(&mut environment);
    environment
}

/// Compiles `source` for `environment`, first refusing what could build a value without bound
/// (a block `set`, `*`, `namespace`, more than a few `~`: see `source_check`).
///
/// # Errors
/// A syntax error, or a refused construct (a syntax error whose detail says what to do instead).
pub fn compile<'env, 'source>(
    environment: &'env Environment<'static>,
    source: &'source str,
) -> Result<Template<'env, 'source>, minijinja::Error> {
    source_check::check(source)?;
    environment.template_from_str(source)
}

/// `text` percent-encoded as one URL component (a path segment, a query value): everything but
/// RFC 3986's unreserved characters.
pub fn encode_component(text: &str) -> percent_encoding::PercentEncode<'_> {
    utf8_percent_encode(text, URL_COMPONENT)
}

/// The auto-escape mode of URL templates: values are percent-encoded.
const URL_ESCAPE: AutoEscape = AutoEscape::Custom("url");

/// What a value printed into a URL keeps as it is: RFC 3986's unreserved characters.
const URL_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// An [`environment`] for templates that write a URL: every value printed is percent-encoded as
/// one path segment or query value (see the module doc); `| safe` opts a value out.
#[must_use]
pub fn url_environment() -> Environment<'static> {
    let mut environment = environment();
    environment.set_auto_escape_callback(|_| URL_ESCAPE);
    environment.set_formatter(url_formatter);
    environment
}

fn url_formatter(
    out: &mut Output<'_>,
    state: &State<'_, '_>,
    value: &Value,
) -> Result<(), minijinja::Error> {
    if state.auto_escape() != URL_ESCAPE || value.is_safe() {
        return escape_formatter(out, state, value);
    }
    let text = value.to_string();
    if text == "." || text == ".." {
        return Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("a value inserted into the URL is `{text}`, which would move along the path; write `| safe` after it if that is meant"),
        ));
    }
    write!(out, "{}", encode_component(&text)).map_err(minijinja::Error::from)
}

/// How a bounded render ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhausted {
    /// More instructions than [`FUEL`].
    Fuel,
    /// More output than the caller's cap.
    Output,
}

impl Exhausted {
    /// Which bound `error` (from [`render`]) hit, if it is one of them.
    #[must_use]
    pub fn of(error: &minijinja::Error) -> Option<Self> {
        match error.kind() {
            ErrorKind::OutOfFuel => Some(Self::Fuel),
            ErrorKind::WriteFailure => Some(Self::Output),
            _ => None,
        }
    }
}

/// Renders `template` (from an [`environment`]) over `context`, stopping as soon as the output
/// would pass `max_bytes`.
///
/// # Errors
/// The template's own errors; `OutOfFuel` past [`FUEL`]; `WriteFailure` past `max_bytes`
/// ([`Exhausted::of`] tells those two apart).
pub fn render(
    template: &Template<'_, '_>,
    context: impl Serialize,
    max_bytes: usize,
) -> Result<String, minijinja::Error> {
    let mut capped = Capped {
        written: Vec::new(),
        max_bytes,
    };
    template.render_captured_to(context, &mut capped)?;
    Ok(String::from_utf8_lossy(&capped.written).into_owned())
}

/// Renders `source` over `context` in a fresh [`environment`], as [`render`].
///
/// # Errors
/// As [`render`], and syntax errors.
pub fn render_str(
    source: &str,
    context: impl Serialize,
    max_bytes: usize,
) -> Result<String, minijinja::Error> {
    let environment = environment();
    let template = compile(&environment, source)?;
    render(&template, context, max_bytes)
}

/// Renders `source`, a template that writes a URL, over `context` in a fresh
/// [`url_environment`], as [`render`].
///
/// # Errors
/// As [`render_str`], and a value that is exactly `.` or `..`.
pub fn render_url_str(
    source: &str,
    context: impl Serialize,
    max_bytes: usize,
) -> Result<String, minijinja::Error> {
    let environment = url_environment();
    let template = compile(&environment, source)?;
    render(&template, context, max_bytes)
}

/// A buffer that refuses a write that would take it past `max_bytes`.
struct Capped {
    written: Vec<u8>,
    max_bytes: usize,
}

impl io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written.len().saturating_add(buf.len()) > self.max_bytes {
            return Err(io::Error::other("the output cap was reached"));
        }
        self.written.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_nested_range_runs_out_of_fuel() {
        let source =
            "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}";
        let error = render_str(source, json!({}), 1_000).err();
        assert_eq!(
            error.as_ref().and_then(Exhausted::of),
            Some(Exhausted::Fuel),
            "{error:?}"
        );
    }

    #[test]
    fn output_past_the_cap_stops_the_render() {
        let error = render_str(
            "{% for a in range(1000) %}0123456789{% endfor %}",
            json!({}),
            5_000,
        )
        .err();
        assert_eq!(
            error.as_ref().and_then(Exhausted::of),
            Some(Exhausted::Output),
            "{error:?}"
        );
    }

    #[test]
    fn values_printed_into_a_url_are_percent_encoded_unless_marked_safe(
    ) -> Result<(), minijinja::Error> {
        let state = json!({"id": "../admin?x=1#y z", "n": 7, "base": "/demo-api/items"});
        assert_eq!(
            render_url_str("/items/{{ id }}/{{ n }}?q={{ id }}", &state, 1_000)?,
            "/items/..%2Fadmin%3Fx%3D1%23y%20z/7?q=..%2Fadmin%3Fx%3D1%23y%20z"
        );
        assert_eq!(
            render_url_str("{{ base | safe }}/{{ n }}", &state, 1_000)?,
            "/demo-api/items/7"
        );
        for dots in [".", ".."] {
            let error = render_url_str("/items/{{ id }}/x", json!({"id": dots}), 1_000).err();
            assert!(
                error.as_ref().is_some_and(|error| error
                    .to_string()
                    .contains(&format!("a value inserted into the URL is `{dots}`"))),
                "{error:?}"
            );
        }
        // Other templates print values as they are.
        assert_eq!(render_str("{{ id }}", &state, 1_000)?, "../admin?x=1#y z");
        Ok(())
    }

    #[test]
    fn a_loop_over_a_few_thousand_rows_still_renders() -> Result<(), minijinja::Error> {
        let rows: Vec<_> = (0..3_000)
            .map(|n| json!({"subject": format!("s{n}")}))
            .collect();
        let text = render_str(
            "{% for e in data.emails %}{{ e.subject }},{% endfor %}",
            json!({"data": {"emails": rows}}),
            1_000_000,
        )?;
        assert!(
            text.starts_with("s0,s1,") && text.ends_with("s2999,"),
            "{text}"
        );
        Ok(())
    }
}
