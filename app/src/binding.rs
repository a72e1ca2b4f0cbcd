//! Data binding: `{"$data": "/pointer"}` prop values and `{{/pointer}}` placeholders in strings.
//!
//! A model never copies rows into a page: it points at them. Binding keeps the model's output the
//! same size whatever the data size, and lets a stored tree be re-rendered with a newer data
//! snapshot. Resolution happens at render time, before props are deserialized into a component's
//! props type, and it never fails: a pointer that leads nowhere resolves to `null` (a whole-value
//! binding) or to the empty string (a placeholder), and [`unresolved_bindings`] reports it so tree
//! validation can tell the model.
//!
//! A binding may also ask code to compute from the bound array (a total, a count, per-group
//! totals, a sorted and limited copy): see [`computed`].
//!
//! This module produces plain JSON values. It must not produce markup: everything it returns is
//! later written through Leptos text nodes and attributes, which escape it.

pub mod computed;

use serde_json::{Map, Value};

use computed::Computed;

/// The key of a whole-value binding object: `{"$data": "/json/pointer"}`.
pub const DATA_KEY: &str = "$data";

/// Returns the pointer when `value` is a binding object `{"$data": "<pointer>"}` (exactly one key).
#[must_use]
pub fn binding_pointer(value: &Value) -> Option<&str> {
    match value {
        Value::Object(map) if map.len() == 1 => map.get(DATA_KEY).and_then(Value::as_str),
        _ => None,
    }
}

/// A node's props as the tree holds them (bindings unresolved) beside the page data they bind to:
/// where a component reads the rows of a by-reference prop
/// ([`ComponentProps::BY_REFERENCE`](crate::catalog::ComponentProps::BY_REFERENCE)) without
/// copying them, both to check and submit ([`crate::tree::BoundData`]) and to render
/// ([`crate::render::NodeCtx::bound`]).
#[derive(Clone, Copy, Debug)]
pub struct BoundProps<'a> {
    /// The props with their bindings.
    pub props: &'a Value,
    /// The page data.
    pub data: &'a Value,
}

impl<'a> BoundProps<'a> {
    /// The rows the top-level prop `prop` is bound to (`{"$data": "/pointer"}` pointing at an
    /// array), borrowed from the page data; `None` when the prop is absent, literal or bound to
    /// something else.
    #[must_use]
    pub fn rows(&self, prop: &str) -> Option<&'a [Value]> {
        let pointer = binding_pointer(self.props.get(prop)?)?;
        lookup(self.data, pointer)?.as_array().map(Vec::as_slice)
    }
}

/// Resolves every binding in `props` against `data`, deeply.
///
/// `{"$data": "/p"}` becomes a copy of the value at `/p` (`null` when nothing is there);
/// `{{/p}}` inside a string becomes that value's text (see [`value_text`]), or nothing when missing.
/// Values taken from `data` are inserted as they are: they are never scanned for placeholders again,
/// so a data cell holding `{{/secret}}` stays literal text.
#[must_use]
pub fn resolve_props(props: &Value, data: &Value) -> Value {
    if let Some(pointer) = binding_pointer(props) {
        return lookup(data, pointer).cloned().unwrap_or(Value::Null);
    }
    if let Some(computed) = Computed::parse(props) {
        return computed.apply(lookup(data, computed.pointer));
    }
    match props {
        Value::String(text) => Value::String(fill_placeholders(text, data)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| resolve_props(item, data)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), resolve_props(value, data)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// Resolves `props` like [`resolve_props`], except that a top-level prop named in
/// `by_reference` whose whole-value binding points at an array resolves to an empty array.
///
/// The renderer uses it for the props a component reads through
/// [`NodeCtx::bound`](crate::render::NodeCtx::bound) instead: a Table's thousand rows are then
/// neither copied into the props nor deserialized into its props type, only read where they
/// are. A binding to anything but an array (or to nothing) resolves as usual, so the props type
/// still rejects it with the same message.
#[must_use]
pub fn resolve_props_leaving_arrays(props: &Value, data: &Value, by_reference: &[&str]) -> Value {
    let whole_props_bound = binding_pointer(props).is_some() || Computed::parse(props).is_some();
    let Value::Object(map) = props else {
        return resolve_props(props, data);
    };
    if by_reference.is_empty() || whole_props_bound {
        return resolve_props(props, data);
    }
    Value::Object(
        map.iter()
            .map(|(key, value)| {
                let bound_array = by_reference.contains(&key.as_str())
                    && binding_pointer(value)
                        .and_then(|pointer| lookup(data, pointer))
                        .is_some_and(Value::is_array);
                let resolved = if bound_array {
                    Value::Array(Vec::new())
                } else {
                    resolve_props(value, data)
                };
                (key.clone(), resolved)
            })
            .collect::<Map<String, Value>>(),
    )
}

/// Lists the pointers in `props` (bindings and placeholders) that point nowhere in `data`.
///
/// Each entry reads `<prop path>: <pointer>`, for example `rows: /emails`, so a model can find it.
#[must_use]
pub fn unresolved_bindings(props: &Value, data: &Value) -> Vec<String> {
    let mut missing = Vec::new();
    collect_unresolved(props, data, "", &mut missing);
    missing
}

fn collect_unresolved(props: &Value, data: &Value, path: &str, missing: &mut Vec<String>) {
    let shown_path = if path.is_empty() { "(props)" } else { path };
    if let Some(pointer) =
        binding_pointer(props).or_else(|| Computed::parse(props).map(|computed| computed.pointer))
    {
        if lookup(data, pointer).is_none() {
            missing.push(format!("{shown_path}: {pointer}"));
        }
        return;
    }
    match props {
        Value::String(text) => {
            for pointer in placeholders(text) {
                if lookup(data, pointer).is_none() {
                    missing.push(format!("{shown_path}: {{{{{pointer}}}}}"));
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_unresolved(item, data, &join_path(path, &index.to_string()), missing);
            }
        }
        Value::Object(map) => {
            for (key, value) in map {
                collect_unresolved(value, data, &join_path(path, key), missing);
            }
        }
        _ => {}
    }
}

fn join_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Follows an RFC 6901 pointer. The empty pointer is the whole document; anything that does not
/// start with `/` points nowhere.
#[must_use]
pub fn lookup<'a>(data: &'a Value, pointer: &str) -> Option<&'a Value> {
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return None;
    }
    data.pointer(pointer)
}

/// The text a value contributes to a string: strings as they are, numbers and booleans formatted,
/// `null` empty, arrays and objects as compact JSON.
#[must_use]
pub fn value_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::Array(_) | Value::Object(_) => value.to_string(),
    }
}

/// Iterates the pointers of the `{{/pointer}}` placeholders in `text`, left to right.
///
/// Only `{{` directly followed by `/` and closed by `}}` is a placeholder; any other `{{` is text.
pub fn placeholders(text: &str) -> impl Iterator<Item = &str> {
    Placeholders { rest: text }.filter_map(|piece| match piece {
        Piece::Pointer(pointer) => Some(pointer),
        Piece::Text(_) => None,
    })
}

/// Replaces every `{{/pointer}}` in `text` by the pointed value's text (missing → empty).
#[must_use]
pub fn fill_placeholders(text: &str, data: &Value) -> String {
    if !text.contains("{{") {
        return text.to_owned();
    }
    let mut filled = String::with_capacity(text.len());
    for piece in (Placeholders { rest: text }) {
        match piece {
            Piece::Text(literal) => filled.push_str(literal),
            Piece::Pointer(pointer) => {
                if let Some(value) = lookup(data, pointer) {
                    filled.push_str(&value_text(value));
                }
            }
        }
    }
    filled
}

enum Piece<'a> {
    Text(&'a str),
    Pointer(&'a str),
}

struct Placeholders<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Placeholders<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let rest = self.rest;
        let Some(open) = rest.find("{{/") else {
            self.rest = "";
            return Some(Piece::Text(rest));
        };
        if open > 0 {
            self.rest = &rest[open..];
            return Some(Piece::Text(&rest[..open]));
        }
        let inner = &rest[2..];
        match inner.find("}}") {
            Some(close) => {
                self.rest = &inner[close + 2..];
                Some(Piece::Pointer(&inner[..close]))
            }
            None => {
                self.rest = "";
                Some(Piece::Text(rest))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data() -> Value {
        json!({
            "emails": [{"subject": "Hi", "size": 12}],
            "user": {"name": "Ada", "admin": true, "age": 36.5},
            "a/b": "slash",
            "tricky": "{{/user/name}}"
        })
    }

    #[test]
    fn a_data_binding_is_replaced_by_the_pointed_value() {
        let props = json!({"rows": {"$data": "/emails"}, "title": "Inbox"});
        let resolved = resolve_props(&props, &data());
        assert_eq!(
            resolved,
            json!({"rows": [{"subject": "Hi", "size": 12}], "title": "Inbox"})
        );
    }

    #[test]
    fn bindings_are_resolved_inside_nested_arrays_and_objects() {
        let props = json!({"items": [{"label": "Name", "value": {"$data": "/user/name"}}]});
        assert_eq!(
            resolve_props(&props, &data()),
            json!({"items": [{"label": "Name", "value": "Ada"}]})
        );
    }

    #[test]
    fn a_missing_binding_resolves_to_null_and_is_reported() {
        let props = json!({"rows": {"$data": "/nothing"}});
        assert_eq!(resolve_props(&props, &data()), json!({"rows": null}));
        assert_eq!(
            unresolved_bindings(&props, &data()),
            vec!["rows: /nothing".to_owned()]
        );
    }

    #[test]
    fn placeholders_are_filled_with_text_numbers_and_booleans() {
        let props = json!("{{/user/name}} is {{/user/age}}, admin: {{/user/admin}}");
        assert_eq!(
            resolve_props(&props, &data()),
            json!("Ada is 36.5, admin: true")
        );
    }

    #[test]
    fn a_missing_placeholder_becomes_empty_and_is_reported() {
        let props = json!({"text": "Hello {{/user/nick}}!"});
        assert_eq!(resolve_props(&props, &data()), json!({"text": "Hello !"}));
        assert_eq!(
            unresolved_bindings(&props, &data()),
            vec!["text: {{/user/nick}}".to_owned()]
        );
    }

    #[test]
    fn pointer_escapes_follow_rfc_6901() {
        assert_eq!(fill_placeholders("{{/a~1b}}", &data()), "slash");
    }

    #[test]
    fn braces_that_are_not_placeholders_stay_literal() {
        let text = "{{ not a pointer }} and {{/unclosed";
        assert_eq!(fill_placeholders(text, &data()), text);
        assert!(unresolved_bindings(&json!(text), &data()).is_empty());
    }

    #[test]
    fn inserted_data_is_never_expanded_again() {
        assert_eq!(fill_placeholders("{{/tricky}}", &data()), "{{/user/name}}");
    }

    #[test]
    fn an_object_with_more_keys_than_data_is_not_a_binding() {
        let props = json!({"$data": "/user", "other": 1});
        assert_eq!(resolve_props(&props, &data()), props);
    }

    #[test]
    fn a_pointer_without_a_leading_slash_points_nowhere() {
        assert!(lookup(&data(), "user").is_none());
        assert_eq!(lookup(&data(), ""), Some(&data()));
    }
}
