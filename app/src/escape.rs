//! HTML escaping for the few places markup is written by hand rather than by Leptos's renderer.
//!
//! Leptos escapes text and attributes it renders itself; these helpers cover the rest: the
//! document `<title>` and `<textarea>` contents, which are set as markup, and the server's HTML
//! e-mails. One module so every hand-written piece of markup escapes the same characters.

/// Escapes `&`, `<` and `>`: enough for text between tags (element content, `<title>`,
/// `<textarea>`), where quotes mean nothing.
#[must_use]
pub fn escape_text(text: &str) -> String {
    escape(text, false)
}

/// Escapes `&`, `<`, `>`, `"` and `'`: for a value inside a quoted attribute, and for text that
/// may end up in one.
#[must_use]
pub fn escape_attribute(text: &str) -> String {
    escape(text, true)
}

/// [`escape_text`] written onto the end of `out`: for markup built in one buffer.
pub fn push_text(out: &mut String, text: &str) {
    push_escaped(out, text, false);
}

/// [`escape_attribute`] written onto the end of `out`.
pub fn push_attribute(out: &mut String, text: &str) {
    push_escaped(out, text, true);
}

fn escape(text: &str, quotes: bool) -> String {
    let mut escaped = String::with_capacity(text.len());
    push_escaped(&mut escaped, text, quotes);
    escaped
}

fn push_escaped(out: &mut String, text: &str, quotes: bool) {
    // Runs of plain text are copied whole; only the five markup characters (all ASCII, so every
    // index below is a character boundary) are replaced.
    let mut plain_from = 0;
    for (index, byte) in text.bytes().enumerate() {
        let entity = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if quotes => "&quot;",
            b'\'' if quotes => "&#39;",
            _ => continue,
        };
        out.push_str(&text[plain_from..index]);
        out.push_str(entity);
        plain_from = index + 1;
    }
    out.push_str(&text[plain_from..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_markup_but_keeps_quotes() {
        assert_eq!(
            escape_text(r#"Fish & "chips" <b>'now'</b>"#),
            r#"Fish &amp; "chips" &lt;b&gt;'now'&lt;/b&gt;"#
        );
    }

    #[test]
    fn attributes_escape_quotes_too() {
        assert_eq!(
            escape_attribute(r#"https://x.example/?a=1&b="2"&c='3'<"#),
            "https://x.example/?a=1&amp;b=&quot;2&quot;&amp;c=&#39;3&#39;&lt;"
        );
    }

    #[test]
    fn escaping_twice_escapes_the_ampersands_again() {
        // Callers escape once, at the point markup is written; a second pass shows `&amp;lt;`.
        assert_eq!(escape_text(&escape_text("<")), "&amp;lt;");
        assert_eq!(escape_text("plain text, ünïcode"), "plain text, ünïcode");
    }
}
