//! Writing into a run's state by JSON pointer (RFC 6901), creating the objects on the way.

use serde_json::{Map, Value};

/// The pointer's tokens, unescaped (`~1` → `/`, `~0` → `~`); `None` when it does not start
/// with `/`.
pub(crate) fn tokens(pointer: &str) -> Option<Vec<String>> {
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|token| token.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

/// Sets `value` at `pointer` in `state`, creating missing objects; an array element is replaced
/// by index. Fails when the path crosses a value that is neither object nor array.
pub(crate) fn set(state: &mut Value, pointer: &str, value: Value) -> Result<(), String> {
    let tokens = tokens(pointer).ok_or_else(|| format!("`{pointer}` does not start with /"))?;
    let mut here = state;
    for (position, token) in tokens.iter().enumerate() {
        let last = position + 1 == tokens.len();
        if here.is_null() {
            *here = Value::Object(Map::new());
        }
        here = match here {
            Value::Object(map) => {
                if last {
                    map.insert(token.clone(), value);
                    return Ok(());
                }
                map.entry(token.clone()).or_insert(Value::Null)
            }
            Value::Array(items) => {
                let slot = token
                    .parse::<usize>()
                    .ok()
                    .and_then(|index| items.get_mut(index))
                    .ok_or_else(|| format!("`{pointer}`: no element {token}"))?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => {
                return Err(format!(
                    "`{pointer}` goes through a value that is not an object"
                ))
            }
        };
    }
    // The empty token list cannot happen (`/` gives one empty token); replace the whole state.
    *here = value;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn setting_by_pointer_creates_the_objects_on_the_way() -> Result<(), String> {
        let mut state = json!({"claim": {"id": "exp-1"}});
        set(&mut state, "/decision/reason", json!("ok"))?;
        set(&mut state, "/claim/id", json!("exp-2"))?;
        assert_eq!(
            state,
            json!({"claim": {"id": "exp-2"}, "decision": {"reason": "ok"}})
        );
        assert!(set(&mut state, "/claim/id/deeper", json!(1)).is_err());
        Ok(())
    }
}
