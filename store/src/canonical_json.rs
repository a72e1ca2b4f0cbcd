//! [`canonical_json`]: one JSON text per value, whatever order its object keys were built in.
//!
//! Page-cache keys (`agent::cache`), confirmation digests (`chat::confirm`) and the component-set
//! digest hash this text, so its bytes are a stored contract: changing them strands every cached
//! page and pending confirmation. Keys are sorted by their UTF-8 bytes at every level; there is
//! no whitespace; strings, numbers and literals are written exactly as `serde_json` writes them.

use serde_json::Value;

/// JSON with object keys sorted (by UTF-8 bytes) at every level and no whitespace.
#[must_use]
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|left, right| left.0.as_bytes().cmp(right.0.as_bytes()));
            out.push('{');
            for (position, (key, item)) in entries.into_iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_sorted_at_every_level() {
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": {"d": [{"z": 1, "y": 2}], "c": null}})),
            r#"{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}"#
        );
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        assert_eq!(
            canonical_json(&json!({"b": [1, {"d": "\"q\"", "c": null}], "a": true})),
            r#"{"a":true,"b":[1,{"c":null,"d":"\"q\""}]}"#
        );
        assert_eq!(
            canonical_json(&json!({"k\n": "é\u{1}", "K": 1.5})),
            "{\"K\":1.5,\"k\\n\":\"é\\u0001\"}"
        );
    }

    #[test]
    fn key_order_follows_bytes_not_letters() {
        // Upper case sorts before lower case, and a prefix before its extensions.
        assert_eq!(
            canonical_json(&json!({"ab": 1, "a": 2, "B": 3, "é": 4})),
            r#"{"B":3,"a":2,"ab":1,"é":4}"#
        );
    }

    #[test]
    fn the_text_is_what_serde_json_writes_for_a_sorted_value() {
        // Cache keys written before this module existed came from `Value::to_string` of a value
        // rebuilt with sorted keys; the bytes must not change.
        let value =
            json!({"z": [{"y": "x", "b": [true, null, -1, 2.25]}], "a": {"q": "\"", "p": {}}});
        let sorted: Value = serde_json::from_str(&canonical_json(&value)).unwrap_or_default();
        assert_eq!(sorted, value);
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"p":{},"q":"\""},"z":[{"b":[true,null,-1,2.25],"y":"x"}]}"#
        );
    }
}
