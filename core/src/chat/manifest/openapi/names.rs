//! Names and text taken from the document: tool names, slugs, entities, placeholders, the base
//! URL from `servers`, descriptions cut to one short line.

use serde_json::Value;

use super::ImportError;
use crate::chat::manifest::{
    load::is_tool_name,
    operation::{HttpBinding, HttpMethod},
};

/// The document's first server's URL, its variables replaced by their defaults.
pub(super) fn first_server(document: &Value) -> Result<String, ImportError> {
    let server = document.pointer("/servers/0").ok_or_else(|| {
        ImportError::new(
            "servers",
            "the document names no server; give the site a base_url",
        )
    })?;
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .ok_or_else(|| ImportError::new("servers[0].url", "must be a string"))?
        .to_owned();
    for (name, variable) in server
        .get("variables")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(default) = variable.get("default").and_then(Value::as_str) {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    Ok(url)
}

/// A tool name from `operationId`, or `method_path` when there is none: `[A-Za-z0-9_-]`, at most
/// 64 characters.
#[must_use]
pub fn tool_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    let source = operation_id.map_or_else(
        || format!("{}_{path}", method.to_ascii_lowercase()),
        str::to_owned,
    );
    let mut name = String::with_capacity(source.len());
    for character in source.chars() {
        let safe = if character.is_ascii_alphanumeric() || character == '-' {
            character
        } else {
            '_'
        };
        if !(safe == '_' && (name.is_empty() || name.ends_with('_'))) {
            name.push(safe);
        }
    }
    let name = name.trim_end_matches('_');
    let name: String = name.chars().take(64).collect();
    if is_tool_name(&name) {
        name
    } else {
        format!("{}_operation", method.to_ascii_lowercase())
    }
}

/// The `{placeholders}` of `path`, in order.
pub(super) fn placeholders(path: &str) -> Vec<String> {
    HttpBinding {
        method: HttpMethod::Get,
        path: path.to_owned(),
        base_url: None,
        query: Vec::new(),
        body: None,
    }
    .placeholders()
}

/// The last literal segment of a path: `/repos/{owner}/{repo}/issues/{number}` acts on `issues`.
pub(super) fn entity_of(path: &str) -> String {
    path.split('/')
        .rfind(|segment| !segment.is_empty() && !segment.starts_with('{'))
        .map_or_else(|| "items".to_owned(), slug)
}

/// Lower-case letters, digits and `-`: a site or entity name from a title.
#[must_use]
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for character in text.chars() {
        if character.is_ascii_alphanumeric() {
            out.push(character.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_end_matches('-').chars().take(32).collect();
    if out.is_empty() {
        "site".to_owned()
    } else {
        out
    }
}

/// The first non-blank line of `text`, cut to `limit` characters.
pub(super) fn shorten(text: &str, limit: usize) -> String {
    let first = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim();
    if first.chars().count() <= limit {
        first.to_owned()
    } else {
        let cut: String = first.chars().take(limit - 1).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_made_safe() {
        assert_eq!(
            tool_name(Some("issues/list-for-repo"), "GET", "/x"),
            "issues_list-for-repo"
        );
        assert_eq!(
            tool_name(None, "GET", "/repos/{owner}/{repo}"),
            "get_repos_owner_repo"
        );
        assert_eq!(tool_name(Some(&"a".repeat(80)), "GET", "/").len(), 64);
    }
}
