//! Reading a person's form submission: decode, validate, and on failure keep what they typed.
//!
//! Shared by every page that takes a submission (generated pages, the field-types demo), so the
//! rules of DESIGN.md §5 are applied in one place.

use serde_json::Value;
use tessera_app::{
    components::decision::decode_decisions,
    render::{FormState, ACTION_FIELD, DECLINE_REASON_FIELD},
};

use super::people::clean_reason;
use crate::forms::{decode_offered, pairs, raw_values, FormSchema, Offered};

/// What a submission amounts to.
#[derive(Clone, Debug, PartialEq)]
pub enum Submission {
    /// A value of the schema's shape that passed every rule.
    Valid(Value),
    /// The person pressed a Cancel button; the fields were not validated.
    Cancelled,
    /// The person pressed Decline, with the reason they gave (trimmed; `None` when empty); the
    /// fields were not validated.
    Declined(Option<String>),
    /// Something was wrong: the form state to show again, with their values and one message per field.
    Invalid(FormState),
}

/// Decodes and validates `body` against `schema` and what the page `offered`; a pressed Cancel
/// or Decline button wins over the fields.
#[must_use]
pub fn read_submission(schema: &FormSchema, offered: &Offered, body: &[u8]) -> Submission {
    let values = raw_values(body);
    let last = |key: &str| values.get(key).and_then(|found| found.last());
    match last(ACTION_FIELD).map(String::as_str) {
        Some("cancel") => Submission::Cancelled,
        Some("decline") => {
            Submission::Declined(clean_reason(last(DECLINE_REASON_FIELD).map(String::as_str)))
        }
        _ => read_fields(schema, offered, body),
    }
}

/// Decodes and validates `body` against `schema` and what the page `offered`, for a page without a
/// Cancel button: a `cancel` action in the body (a crafted request) is ignored and the fields
/// decide.
#[must_use]
pub fn read_fields(schema: &FormSchema, offered: &Offered, body: &[u8]) -> Submission {
    let body = &with_decisions(body);
    let values = raw_values(body);
    match decode_offered(schema, offered, body) {
        Ok(value) => Submission::Valid(value),
        Err(errors) => {
            let mut form_error = None;
            let mut by_field = errors.0;
            if let Some(message) = by_field.remove("") {
                form_error = Some(message);
            }
            let count = by_field.len();
            let summary = match count {
                0 => form_error,
                1 => {
                    Some("One field needs your attention; your answers are kept below.".to_owned())
                }
                _ => Some(format!(
                    "{count} fields need your attention; your answers are kept below."
                )),
            };
            Submission::Invalid(FormState {
                values,
                errors: by_field,
                form_error: summary,
            })
        }
    }
}

/// `body` with a `DecisionTable`'s per-row choices turned into the pairs of the fields they fill,
/// so the §5 decoder reads them like any array field.
#[must_use]
pub fn with_decisions(body: &[u8]) -> Vec<u8> {
    let mut encoded = form_urlencoded::Serializer::new(String::new());
    encoded.extend_pairs(decode_decisions(pairs(body)));
    encoded.finish().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forms::{FieldKind, FormField};

    fn schema() -> FormSchema {
        FormSchema::new(vec![
            FormField::new(
                "email",
                FieldKind::String {
                    format: crate::forms::StringFormat::parse("email"),
                    min_length: None,
                    max_length: None,
                    pattern: None,
                },
            ),
            FormField::new("note", FieldKind::string()).optional(),
        ])
    }

    #[test]
    fn a_valid_body_becomes_the_typed_value() {
        assert_eq!(
            read_submission(
                &schema(),
                &Offered::default(),
                b"email=a%40example.com&note="
            ),
            Submission::Valid(serde_json::json!({"email": "a@example.com"}))
        );
    }

    #[test]
    fn a_wrong_field_keeps_every_value_and_names_the_field() {
        let Submission::Invalid(state) =
            read_submission(&schema(), &Offered::default(), b"email=nope&note=keep+me")
        else {
            panic!("expected the submission to be refused");
        };
        assert_eq!(state.values.get("note"), Some(&vec!["keep me".to_owned()]));
        assert_eq!(state.values.get("email"), Some(&vec!["nope".to_owned()]));
        assert!(state.errors.contains_key("email"));
        assert!(state.form_error.is_some());
    }

    #[test]
    fn cancel_skips_validation() {
        assert_eq!(
            read_submission(&schema(), &Offered::default(), b"_action=cancel"),
            Submission::Cancelled
        );
    }

    #[test]
    fn decline_skips_validation_and_keeps_the_trimmed_reason() {
        assert_eq!(
            read_submission(
                &schema(),
                &Offered::default(),
                b"email=nope&_action=decline&_reason=+Over+budget+"
            ),
            Submission::Declined(Some("Over budget".to_owned()))
        );
        assert_eq!(
            read_submission(
                &schema(),
                &Offered::default(),
                b"_action=decline&_reason=%20"
            ),
            Submission::Declined(None)
        );
    }

    #[test]
    fn per_row_decisions_decode_into_their_arrays() -> anyhow::Result<()> {
        let schema = FormSchema::from_json_schema(&serde_json::json!({
            "type": "object",
            "properties": {
                "approved_ids": {"type": "array", "items": {"type": "string"}},
                "rejected_ids": {"type": "array", "items": {"type": "string"}}
            }
        }))?;
        let body = b"_decide%3At-d%3AC1=approved_ids&_decide%3At-d%3AC2=rejected_ids&_decide%3At-d%3AC3=&_decide%3At-d%3AC4=approved_ids";
        assert_eq!(
            read_submission(&schema, &Offered::default(), body),
            Submission::Valid(
                serde_json::json!({"approved_ids": ["C1", "C4"], "rejected_ids": ["C2"]})
            )
        );
        Ok(())
    }
}
