//! What a template may contain, checked on its source before it is compiled.
//!
//! Fuel counts instructions and the output writer counts bytes, but neither sees a value built in
//! memory and never written: `{% set b = a ~ a %}{% set c = b ~ b %}…` doubles with each line,
//! `"x" * 100000000` is 100 MB in one instruction, and a block `set`, a `filter` block, a
//! `namespace` or a recursive loop carries a value from one iteration to the next. Since a `set`
//! inside a loop lasts one iteration, refusing those carriers and counting the operators that
//! join values bounds every value a template can build to `2^MAX_JOINS` times its largest input.

use minijinja::{Error, ErrorKind};

/// How many `~` and `+` one template may use.
pub const MAX_JOINS: usize = 6;

/// Refuses a template whose source could build a value without bound (see the module doc).
///
/// # Errors
/// A syntax error whose detail names the construct and says what to do instead.
pub fn check(source: &str) -> Result<(), Error> {
    let mut joins = 0;
    let mut rest = source;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let (closer, is_statement) = match after.as_bytes().first() {
            Some(b'{') => ("}}", false),
            Some(b'%') => ("%}", true),
            Some(b'#') => {
                rest = after.find("#}").map_or("", |end| &after[end + 2..]);
                continue;
            }
            _ => {
                rest = after;
                continue;
            }
        };
        let body_and_rest = &after[1..];
        let end = closing(body_and_rest, closer).unwrap_or(body_and_rest.len());
        let body = body_and_rest[..end]
            .trim_start_matches(['-', '+'])
            .trim_end_matches(['-', '+']);
        let tokens = tokens(body);
        if is_statement {
            check_statement(&tokens)?;
            if tokens.first().map(Token::text) == Some("raw") {
                let after_tag = &body_and_rest[(end + 2).min(body_and_rest.len())..];
                rest = after_tag.find("endraw").map_or("", |at| &after_tag[at..]);
                continue;
            }
        }
        for token in &tokens {
            match token {
                Token::Operator('*') => return Err(refused(
                    "`*` and `**` are not allowed in a template: repeating a value can build one far larger than anything the template was given; compute the number before the template",
                )),
                Token::Operator('~' | '+') => joins += 1,
                Token::Word("namespace") => return Err(refused(
                    "`namespace` is not allowed in a template: it carries a value from one loop iteration to the next without bound",
                )),
                _ => {}
            }
        }
        if joins > MAX_JOINS {
            return Err(refused(&format!(
                "a template may join values (`~`, `+`) at most {MAX_JOINS} times; print the parts one after another instead"
            )));
        }
        rest = &body_and_rest[(end + 2).min(body_and_rest.len())..];
    }
    Ok(())
}

/// Refuses the statements that keep what they build: a block `set`, a `filter` block and a
/// recursive loop.
fn check_statement(tokens: &[Token<'_>]) -> Result<(), Error> {
    match tokens.first().map(Token::text) {
        Some("set") if !tokens.iter().any(|token| matches!(token, Token::Operator('='))) => {
            Err(refused(
                "a block `{% set name %}…{% endset %}` is not allowed in a template; use `{% set name = … %}` or print the text where it is needed",
            ))
        }
        Some("filter") => Err(refused(
            "a `{% filter %}` block is not allowed in a template; apply the filter to each value with `|`",
        )),
        Some("for") if tokens.iter().any(|token| token.text() == "recursive") => Err(refused(
            "a recursive loop is not allowed in a template; loop over the rows you need",
        )),
        _ => Ok(()),
    }
}

fn refused(detail: &str) -> Error {
    Error::new(ErrorKind::SyntaxError, detail.to_owned())
}

/// Where `closer` ends the tag body that starts `text`, outside string literals.
fn closing(text: &str, closer: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            quote @ (b'"' | b'\'') => index = skip_string(bytes, index, quote),
            _ if text[index..].starts_with(closer) => return Some(index),
            _ => index += 1,
        }
    }
    None
}

/// The index just past the string literal opening at `start`.
fn skip_string(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut index = start + 1;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => index += 2,
            byte if byte == quote => return index + 1,
            _ => index += 1,
        }
    }
    bytes.len()
}

/// A piece of a tag's body: a name or number, or one operator character. String literals are
/// skipped: what they hold is text, not syntax.
#[derive(Debug, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Operator(char),
}

impl Token<'_> {
    fn text(&self) -> &str {
        match self {
            Token::Word(word) => word,
            Token::Operator(_) => "",
        }
    }
}

fn tokens(body: &str) -> Vec<Token<'_>> {
    let bytes = body.as_bytes();
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte == b'"' || byte == b'\'' {
            index = skip_string(bytes, index, byte);
        } else if byte.is_ascii_alphanumeric() || byte == b'_' {
            let start = index;
            while index < bytes.len()
                && (bytes[index].is_ascii_alphanumeric() || matches!(bytes[index], b'_' | b'.'))
            {
                // A number's exponent sign (`1e+5`) belongs to the number.
                let exponent = bytes[start].is_ascii_digit() && matches!(bytes[index], b'e' | b'E');
                index += 1;
                if exponent && index < bytes.len() && matches!(bytes[index], b'+' | b'-') {
                    index += 1;
                }
            }
            tokens.push(Token::Word(&body[start..index]));
        } else if matches!(byte, b'=' | b'!' | b'<' | b'>') {
            // Comparisons (`==`, `!=`, `<=`, `>=`) are one token, so a lone `=` is an assignment.
            let pair = bytes.get(index + 1) == Some(&b'=');
            if byte == b'=' && !pair {
                tokens.push(Token::Operator('='));
            }
            index += if pair { 2 } else { 1 };
        } else {
            if !byte.is_ascii_whitespace() {
                tokens.push(Token::Operator(char::from(byte)));
            }
            index += 1;
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(source: &str) -> Option<String> {
        check(source)
            .err()
            .map(|error| error.detail().unwrap_or_default().to_owned())
    }

    #[test]
    fn ordinary_prompts_pass() {
        for source in [
            "Pick the emails to archive from {{ data.emails | length }} ({{ data.owner ~ \"'s\" }}).",
            "{% for e in data.emails %}{{ loop.index + 1 }}. {{ e.subject | upper }}{% endfor %}",
            "{% set total = data.count %}{% if total >= 3 and total != 7 %}many{% endif %}",
            "{{ \"a * b ~ c + d {% set x %}\" }} {# {% filter upper %} * #}",
            "{% raw %}{{ a * b }}{% set x %}{% endraw %}",
            "{{ 1e+5 }} {{ 2.5e-3 }}",
            "{%- if a -%}{{- a -}}{%- endif -%}",
        ] {
            assert_eq!(detail(source), None, "{source}");
        }
    }

    #[test]
    fn constructs_that_build_without_bound_are_refused_with_what_to_do() {
        for (source, says) in [
            ("{{ ('x' * 100000000) | length }}", "`*` and `**` are not allowed"),
            ("{{ 2 ** 10 }}", "`*` and `**` are not allowed"),
            ("{% set ns = namespace(s='x') %}", "`namespace` is not allowed"),
            ("{% set s %}{{ data }}{% endset %}", "block `{% set name %}"),
            ("{%- set s -%}x{% endset %}", "block `{% set name %}"),
            ("{% filter upper %}x{% endfilter %}", "`{% filter %}` block"),
            ("{% for s in [a] recursive %}{{ loop([s ~ s]) }}{% endfor %}", "recursive loop"),
            (
                "{% set b = a ~ a %}{% set c = b ~ b %}{% set d = c ~ c %}{% set e = d + d %}{% set f = e ~ e %}{% set g = f ~ f %}{% set h = g ~ g %}",
                "at most 6 times",
            ),
        ] {
            let found = detail(source);
            assert!(
                found.as_deref().is_some_and(|text| text.contains(says)),
                "{source}: {found:?}"
            );
        }
    }
}
