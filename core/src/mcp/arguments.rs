//! The MCP tools' arguments, checked before anything starts; every error names its field.
//!
//! `ask_person` takes an ask's fields (checked by [`NewAsk::parse_beside`], as `POST /api/asks`
//! checks them) plus two of its own: `wait_seconds` (how long the call waits for the answer)
//! and `elicit` (`"url"`: send the link as a URL-mode elicitation). The other tools take an
//! `ask_id` and, for `get_answer`, `wait_seconds`; `list_asks` an optional `status`.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::asks::{AskCapabilities, AskError, AskRequest, AskStatus, NewAsk};

/// The longest a call waits for an answer (`wait_seconds`).
pub const MAX_WAIT: Duration = Duration::from_secs(3600);
/// How long an eliciting `ask_person` waits when `wait_seconds` is not given.
pub const DEFAULT_ELICIT_WAIT: Duration = Duration::from_secs(300);

/// `ask_person`'s own fields, beside an ask's.
const ASK_PERSON_OWN: [&str; 2] = ["wait_seconds", "elicit"];

/// How `ask_person` hands the link to the person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elicit {
    /// As a URL-mode elicitation, when the client can open URLs; else in the result.
    Url,
}

/// A checked `ask_person` call.
#[derive(Clone, Debug)]
pub struct AskPerson {
    /// The ask, checked as `POST /api/asks` checks it.
    pub ask: NewAsk,
    /// How long to wait for the answer; zero answers at once.
    pub wait: Duration,
    /// Send the link as an elicitation.
    pub elicit: Option<Elicit>,
}

/// A checked `get_answer` call.
#[derive(Clone, Debug)]
pub struct GetAnswer {
    /// The ask.
    pub ask_id: String,
    /// How long to wait for the answer; zero answers at once.
    pub wait: Duration,
}

/// Checks `ask_person`'s arguments.
///
/// # Errors
/// [`AskError::Invalid`] naming the first field at fault.
pub fn ask_person(
    mut arguments: Map<String, Value>,
    can: &AskCapabilities,
) -> Result<AskPerson, AskError> {
    let elicit = match arguments.remove("elicit") {
        None | Some(Value::Null) => None,
        Some(Value::String(mode)) if mode == "url" => Some(Elicit::Url),
        Some(_) => {
            return Err(AskError::invalid(
                "elicit",
                "must be \"url\": the person answers on the generated page, whose link is sent as a URL-mode elicitation",
            ))
        }
    };
    let wait = match arguments.remove("wait_seconds") {
        None | Some(Value::Null) if elicit.is_some() => DEFAULT_ELICIT_WAIT,
        raw => parse_wait(raw)?,
    };
    let ask = NewAsk::parse_beside(AskRequest(Value::Object(arguments)), can, &ASK_PERSON_OWN)?;
    if elicit.is_some() && ask.people.is_assigned() {
        return Err(AskError::invalid(
            "elicit",
            "an ask with assignees gives each of them a link of their own (in the result's `links`); an elicitation would hand one link to this client's user, so drop `elicit` or `assignees`",
        ));
    }
    Ok(AskPerson { ask, wait, elicit })
}

/// Checks `get_answer`'s arguments.
///
/// # Errors
/// [`AskError::Invalid`] naming the first field at fault.
pub fn get_answer(mut arguments: Map<String, Value>) -> Result<GetAnswer, AskError> {
    refuse_unknown(&arguments, &["ask_id", "wait_seconds"])?;
    let ask_id = parse_ask_id(arguments.remove("ask_id"))?;
    let wait = parse_wait(arguments.remove("wait_seconds"))?;
    Ok(GetAnswer { ask_id, wait })
}

/// Checks `cancel_ask`'s arguments: the ask's id.
///
/// # Errors
/// [`AskError::Invalid`] naming the first field at fault.
pub fn cancel_ask(mut arguments: Map<String, Value>) -> Result<String, AskError> {
    refuse_unknown(&arguments, &["ask_id"])?;
    parse_ask_id(arguments.remove("ask_id"))
}

/// Checks `list_asks`'s arguments: the status to list, if one.
///
/// # Errors
/// [`AskError::Invalid`] naming the first field at fault.
pub fn list_asks(mut arguments: Map<String, Value>) -> Result<Option<AskStatus>, AskError> {
    refuse_unknown(&arguments, &["status"])?;
    match arguments.remove("status") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(raw)) if AskStatus::parse(&raw).is_some() => Ok(AskStatus::parse(&raw)),
        Some(_) => Err(AskError::invalid(
            "status",
            format!("must be one of {}", statuses()),
        )),
    }
}

/// A checked `show_page` call (a view's own tool).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShowPage {
    /// The view's capability.
    pub view: String,
    /// A table's page or sort, as its link's query; empty for none.
    pub query: String,
}

/// A checked `submit_answer` call (a view's own tool).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmitAnswer {
    /// The view's capability.
    pub view: String,
    /// The form, `application/x-www-form-urlencoded`.
    pub body: String,
}

/// The longest view capability taken (they are 48 characters; anything longer is no view).
const MAX_VIEW_CHARS: usize = 128;

/// Checks `show_page`'s arguments.
///
/// # Errors
/// [`AskError::Invalid`] naming the first field at fault.
pub fn show_page(mut arguments: Map<String, Value>) -> Result<ShowPage, AskError> {
    refuse_unknown(&arguments, &["view", "query"])?;
    let view = parse_view(arguments.remove("view"))?;
    let query = match arguments.remove("query") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(query)) if query.len() <= super::inline::MAX_QUERY_BYTES => query,
        Some(_) => {
            return Err(AskError::invalid(
                "query",
                format!(
                    "must be a link's query string of at most {} bytes",
                    super::inline::MAX_QUERY_BYTES
                ),
            ))
        }
    };
    Ok(ShowPage { view, query })
}

/// Checks `submit_answer`'s arguments.
///
/// # Errors
/// [`AskError::Invalid`] naming the first field at fault.
pub fn submit_answer(mut arguments: Map<String, Value>) -> Result<SubmitAnswer, AskError> {
    refuse_unknown(&arguments, &["view", "body"])?;
    let view = parse_view(arguments.remove("view"))?;
    match arguments.remove("body") {
        Some(Value::String(body)) => Ok(SubmitAnswer { view, body }),
        _ => Err(AskError::invalid(
            "body",
            "is required: the form as application/x-www-form-urlencoded (a string)",
        )),
    }
}

fn parse_view(value: Option<Value>) -> Result<String, AskError> {
    match value {
        Some(Value::String(view)) if !view.is_empty() && view.len() <= MAX_VIEW_CHARS => Ok(view),
        _ => Err(AskError::invalid(
            "view",
            "is required: the view's capability from the page's `_meta` (a string)",
        )),
    }
}

fn statuses() -> String {
    AskStatus::ALL
        .iter()
        .map(|status| status.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn refuse_unknown(arguments: &Map<String, Value>, fields: &[&str]) -> Result<(), AskError> {
    match arguments.keys().find(|key| !fields.contains(&key.as_str())) {
        Some(unknown) => Err(AskError::invalid(
            unknown.clone(),
            format!(
                "unknown field `{unknown}`; the fields are {}",
                fields.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

fn parse_ask_id(value: Option<Value>) -> Result<String, AskError> {
    match value {
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(id.trim().to_owned()),
        None | Some(Value::Null) => Err(AskError::invalid(
            "ask_id",
            "is required: the id ask_person answered",
        )),
        Some(_) => Err(AskError::invalid(
            "ask_id",
            "must be the id ask_person answered (a string)",
        )),
    }
}

fn parse_wait(value: Option<Value>) -> Result<Duration, AskError> {
    match value {
        None | Some(Value::Null) => Ok(Duration::ZERO),
        Some(Value::Number(number)) => number
            .as_u64()
            .map(Duration::from_secs)
            .filter(|wait| *wait <= MAX_WAIT)
            .ok_or_else(out_of_range),
        Some(_) => Err(out_of_range()),
    }
}

fn out_of_range() -> AskError {
    AskError::invalid(
        "wait_seconds",
        format!(
            "must be a whole number of seconds from 0 to {}",
            MAX_WAIT.as_secs()
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(object) => object,
            _ => Map::new(),
        }
    }

    fn field_of(error: AskError) -> String {
        match error {
            AskError::Invalid { field, .. } => field,
            other => format!("not invalid: {other}"),
        }
    }

    #[test]
    fn ask_person_takes_its_own_fields_beside_an_asks() -> Result<(), AskError> {
        let can = AskCapabilities::default();
        let call = ask_person(
            object(json!({"prompt": "Approve?", "wait_seconds": 30, "elicit": "url"})),
            &can,
        )?;
        assert_eq!(call.wait, Duration::from_secs(30));
        assert_eq!(call.elicit, Some(Elicit::Url));
        assert_eq!(call.ask.prompt, "Approve?");

        let eliciting = ask_person(object(json!({"prompt": "q", "elicit": "url"})), &can)?;
        assert_eq!(eliciting.wait, DEFAULT_ELICIT_WAIT);
        let plain = ask_person(object(json!({"prompt": "q"})), &can)?;
        assert_eq!((plain.wait, plain.elicit), (Duration::ZERO, None));
        Ok(())
    }

    #[test]
    fn every_bad_argument_names_its_field() {
        let can = AskCapabilities::default();
        let nested = json!({"type": "object", "properties": {"x": {"type": "object"}}});
        let cases = [
            (json!({"prompt": "q", "wait_seconds": -1}), "wait_seconds"),
            (json!({"prompt": "q", "wait_seconds": 4000}), "wait_seconds"),
            (json!({"prompt": "q", "elicit": "form"}), "elicit"),
            (
                json!({"prompt": "q", "schema": nested}),
                "schema.properties.x",
            ),
            (json!({"prompt": "q", "waitSeconds": 3}), "waitSeconds"),
            (json!({}), "prompt"),
        ];
        for (arguments, field) in cases {
            let error = ask_person(object(arguments.clone()), &can).err();
            assert_eq!(error.map(field_of).as_deref(), Some(field), "{arguments}");
        }
        assert_eq!(
            get_answer(object(json!({}))).err().map(field_of).as_deref(),
            Some("ask_id")
        );
        assert_eq!(
            cancel_ask(object(json!({"ask_id": 7})))
                .err()
                .map(field_of)
                .as_deref(),
            Some("ask_id")
        );
        assert_eq!(
            list_asks(object(json!({"status": "done"})))
                .err()
                .map(field_of)
                .as_deref(),
            Some("status")
        );
    }

    #[test]
    fn an_unknown_field_lists_the_tools_own_fields_too() {
        let error = ask_person(
            object(json!({"prompt": "q", "wait": 3})),
            &AskCapabilities::default(),
        )
        .err();
        let message = error.map(|error| error.to_string()).unwrap_or_default();
        assert!(message.contains("wait_seconds, elicit"), "{message}");
    }
}
