//! The request's own words: the heading and the rest of the prompt, the submit button's verb,
//! and text placed literally.

use crate::forms::humanize;

/// Text placed literally: a `{{/` would start a data placeholder, so it is broken up.
pub(super) fn literal(text: &str) -> String {
    text.replace("{{/", "{ {/")
}

/// Cuts `text` to at most `limit` characters at a word boundary, adding an ellipsis.
pub(super) fn clip(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let cut: String = text.chars().take(limit).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(space) if space > limit / 2 => cut[..space].to_owned(),
        _ => cut,
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// The heading (first sentence, without its full stop) and the rest of the request.
pub(super) fn split_prompt(prompt: &str) -> (String, String) {
    let text = prompt.trim();
    let mut end = text.len();
    for (index, character) in text.char_indices() {
        if character == '\n' {
            end = index;
            break;
        }
        if matches!(character, '.' | '!' | '?') {
            let next = text[index + character.len_utf8()..].chars().next();
            if next.is_none_or(char::is_whitespace) {
                end = index
                    + if character == '.' {
                        0
                    } else {
                        character.len_utf8()
                    };
                break;
            }
        }
    }
    let first = text[..end].trim();
    let rest = text[end..]
        .trim_start_matches(['.', '!', '?'])
        .trim()
        .to_owned();
    let mut heading = first.to_owned();
    for polite in ["please ", "Please ", "kindly ", "Kindly "] {
        if let Some(stripped) = heading.strip_prefix(polite) {
            heading = stripped.to_owned();
        }
    }
    let mut characters = heading.chars();
    let heading = match characters.next() {
        Some(initial) => initial.to_uppercase().chain(characters).collect(),
        None => String::new(),
    };
    (clip(&heading, 80), clip(&rest, 400))
}

/// The submit button's label and variant, from the request's first word.
pub(super) fn submit_button(heading: &str) -> (String, &'static str) {
    let verb = heading
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .trim_matches(|character: char| !character.is_alphanumeric())
        .to_lowercase();
    let capitalized = {
        let mut characters = verb.chars();
        characters
            .next()
            .map(|initial| initial.to_uppercase().chain(characters).collect::<String>())
            .unwrap_or_default()
    };
    match verb.as_str() {
        "delete" | "remove" | "discard" | "purge" | "erase" | "destroy" | "wipe" => {
            (capitalized, "danger")
        }
        "choose" | "select" | "pick" | "confirm" => ("Confirm".to_owned(), "primary"),
        "approve" | "archive" | "accept" | "reject" | "decline" | "book" | "send" | "save"
        | "update" | "create" | "register" | "sign" | "schedule" | "request" | "order" | "pay"
        | "apply" | "assign" | "tag" | "label" | "rename" | "move" | "merge" | "publish"
        | "share" | "invite" | "vote" | "rate" | "report" | "subscribe" | "unsubscribe"
        | "continue" | "start" | "run" | "import" | "export" | "upload" | "restore" | "reset"
        | "block" | "allow" | "grant" | "revoke" | "deploy" | "submit" | "add" | "plan"
        | "reply" | "forward" | "mark" | "flag" | "close" | "reopen" | "transfer" | "refund" => {
            (capitalized, "primary")
        }
        _ => ("Submit".to_owned(), "primary"),
    }
}

/// Lower-case words of a name or text (`archive_ids` → `archive`, `ids`).
pub(super) fn words(text: &str) -> Vec<String> {
    humanize(text)
        .to_lowercase()
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A word and its plural/singular partner (`email` ↔ `emails`).
pub(super) fn word_forms(word: &str) -> [String; 2] {
    match word.strip_suffix('s') {
        Some(singular) if !singular.is_empty() => [word.to_owned(), singular.to_owned()],
        _ => [word.to_owned(), format!("{word}s")],
    }
}
