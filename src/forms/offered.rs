//! What a page offers: the closed set of values each of its selection and decision fields can
//! submit, and the rows a `DecisionTable` gives one choice each (DESIGN.md §5, "Answers are bound
//! to the page").
//!
//! A browser sends only what the page shows, but a crafted body can name anything, and the schema
//! cannot refuse it (`approved_ids` is any array of strings). So a decoded submission is checked
//! against what the page's controls offer ([`Offered::check`]): every value of a field with a
//! closed set (selectable Table rows, `DecisionTable` rows, Select, `RadioGroup` and
//! `CheckboxGroup` options, literal or bound) must be one of them; a row may be under only one of a
//! `DecisionTable`'s arrays, and under one of them when it has `requireAll`. A breach is a
//! [`FieldErrors`] entry on the field, like any wrong value.
//!
//! The sets are worked out from the page's tree and data with the catalog it renders with
//! ([`Offered::of_page`]), over every bound row, not only the rows one table page shows: tables
//! page on the server, and ticks on other pages travel as hidden inputs. A field that is also
//! placed as free input somewhere has no closed set.
//!
//! No I/O and no HTTP: `pages::lifecycle` derives and applies it.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::Arc,
};

use serde_json::{Map, Value};
use tessera_app::{
    catalog::{Catalog, RowChoice},
    tree::{PageTree, PlacedField},
};

use super::{decode_and_validate, FieldErrors, FormSchema};

/// Offered values quoted in a message are cut to this many characters (a crafted value may be long).
const QUOTED_CHARS: usize = 40;
/// Undecided rows named in a message, at most.
const ROWS_NAMED: usize = 5;

/// What a page's fields can submit. [`Offered::default`] offers everything (no closed sets).
#[derive(Clone, Debug, Default)]
pub struct Offered {
    /// Fields with a closed set: by name, its label and every set a control with that name offers
    /// (a value must be in one of them).
    closed: BTreeMap<String, ClosedField>,
    /// Rows shared one choice each among several fields, with the rows.
    row_choices: Vec<(Arc<RowChoice>, Arc<[String]>)>,
}

#[derive(Clone, Debug)]
struct ClosedField {
    label: String,
    sets: Vec<Arc<[String]>>,
}

impl Offered {
    /// What the fields placed on a page offer (see [`PageTree::fields`]).
    #[must_use]
    pub fn from_fields(fields: &[PlacedField]) -> Self {
        let mut closed = BTreeMap::new();
        let mut free = HashSet::new();
        let mut row_choices: Vec<(Arc<RowChoice>, Arc<[String]>)> = Vec::new();
        for placed in fields {
            let Some(options) = &placed.options else {
                free.insert(placed.name.as_str());
                continue;
            };
            closed
                .entry(placed.name.clone())
                .or_insert_with(|| ClosedField {
                    label: placed.label.clone(),
                    sets: Vec::new(),
                })
                .sets
                .push(Arc::clone(options));
            if let Some(choice) = &placed.row_choice {
                if !row_choices
                    .iter()
                    .any(|(known, _)| Arc::ptr_eq(known, choice))
                {
                    row_choices.push((Arc::clone(choice), Arc::clone(options)));
                }
            }
        }
        closed.retain(|name, _| !free.contains(name.as_str()));
        Self {
            closed,
            row_choices,
        }
    }

    /// What `tree` offers over `data`, with the components of `catalog` (the ones it renders with).
    #[must_use]
    pub fn of_page(tree: &PageTree, catalog: &Catalog, data: &Value) -> Self {
        Self::from_fields(&tree.fields(catalog, data))
    }

    /// The values `field` may hold, if it has a closed set: every set its controls offer.
    pub fn values_of(&self, field: &str) -> Option<impl Iterator<Item = &str>> {
        self.closed.get(field).map(|closed| {
            closed
                .sets
                .iter()
                .flat_map(|set| set.iter().map(String::as_str))
        })
    }

    /// Checks a decoded answer against what the page offers.
    ///
    /// # Errors
    /// One message per field that names a value the page did not offer, puts a row under a
    /// second decision array, or (the first array of a `requireAll` table) leaves rows undecided.
    pub fn check(
        &self,
        schema: &FormSchema,
        answer: &Map<String, Value>,
    ) -> Result<(), FieldErrors> {
        let mut errors = FieldErrors::new();
        for (name, closed) in &self.closed {
            let submitted = strings(answer.get(name));
            if submitted.is_empty() {
                continue;
            }
            let offered: HashSet<&str> = closed
                .sets
                .iter()
                .flat_map(|set| set.iter().map(String::as_str))
                .collect();
            if let Some(stray) = submitted.iter().find(|value| !offered.contains(*value)) {
                let label = schema
                    .field(name)
                    .map_or_else(|| closed.label.clone(), super::FormField::label);
                errors.add(
                    name.clone(),
                    format!(
                        "{label} can only hold what this page offers, and “{}” is not one of them",
                        quoted(stray)
                    ),
                );
            }
        }
        for (choice, rows) in &self.row_choices {
            check_row_choice(choice, rows, answer, &mut errors);
        }
        errors.into_result(())
    }
}

/// One row, one choice: no row under two of `choice`'s fields, and with `every_row` none left out.
fn check_row_choice(
    choice: &RowChoice,
    rows: &[String],
    answer: &Map<String, Value>,
    errors: &mut FieldErrors,
) {
    let mut decided: HashMap<&str, &str> = HashMap::new();
    for (field, label) in &choice.fields {
        for row in strings(answer.get(field)) {
            match decided.get(row) {
                Some(earlier) if earlier != label => errors.add(
                    field.clone(),
                    format!(
                        "“{}” is under both {earlier} and {label}; give each row one choice",
                        quoted(row)
                    ),
                ),
                Some(_) => {}
                None => {
                    decided.insert(row, label);
                }
            }
        }
    }
    if !choice.every_row {
        return;
    }
    let undecided: Vec<&str> = rows
        .iter()
        .map(String::as_str)
        .filter(|row| !decided.contains_key(row))
        .collect();
    let Some((first_field, _)) = choice.fields.first() else {
        return;
    };
    if let Some(first) = undecided.first() {
        let named: Vec<String> = undecided
            .iter()
            .take(ROWS_NAMED)
            .map(|row| format!("“{}”", quoted(row)))
            .collect();
        let more = undecided.len().saturating_sub(ROWS_NAMED);
        let message = match (undecided.len(), more) {
            (1, _) => format!("Every row needs a choice; “{}” has none", quoted(first)),
            (count, 0) => format!(
                "Every row needs a choice; {count} have none: {}",
                named.join(", ")
            ),
            (count, more) => format!(
                "Every row needs a choice; {count} have none: {} and {more} more",
                named.join(", ")
            ),
        };
        errors.add(first_field.clone(), message);
    }
}

/// The texts of a decoded string or array of strings (other values have no closed set).
fn strings(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// `text` cut to [`QUOTED_CHARS`] characters, for a message.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Decodes and validates a form body ([`decode_and_validate`]), then checks the answer against what
/// the page offers ([`Offered::check`]): the call a page's POST makes.
///
/// # Errors
/// The decoder's and validator's messages; when the body decodes, the offered-set messages.
pub fn decode_offered(
    schema: &FormSchema,
    offered: &Offered,
    body: &[u8],
) -> Result<Value, FieldErrors> {
    let value = decode_and_validate(schema, body)?;
    if let Value::Object(answer) = &value {
        offered.check(schema, answer)?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn schema() -> Result<FormSchema, super::super::SchemaError> {
        FormSchema::from_json_schema(&json!({"type": "object", "properties": {
            "approved_ids": {"type": "array", "items": {"type": "string"}},
            "rejected_ids": {"type": "array", "items": {"type": "string"}},
            "archive": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string"},
            "team": {"type": "string"}
        }}))
    }

    fn page(require_all: bool) -> Result<(PageTree, Value), serde_json::Error> {
        let tree = serde_json::from_value(json!({"nodes": {
            "f": {"component": "Form", "props": {}, "children": ["d", "t", "n", "s", "b"]},
            "d": {"component": "DecisionTable", "props": {
                "label": "Claims", "rows": {"$data": "/claims"}, "idKey": "id", "requireAll": require_all,
                "choices": [{"name": "approved_ids", "label": "Approve"}, {"name": "rejected_ids", "label": "Reject"}]}},
            "t": {"component": "Table", "props": {"rows": {"$data": "/emails"}, "pageSize": 1,
                "selectable": {"name": "archive", "idKey": "id", "label": "Emails to archive"}}},
            "n": {"component": "Input", "props": {"name": "note", "label": "Note"}},
            "s": {"component": "Select", "props": {"name": "team", "label": "Team", "options": {"$data": "/teams"}}},
            "b": {"component": "Button", "props": {"label": "Send", "kind": "submit"}}
        }}))?;
        let data = json!({
            "claims": [{"id": "C1"}, {"id": "C2"}, {"id": "C3"}],
            "emails": [{"id": "m1"}, {"id": "m2"}, {"id": "m3"}],
            "teams": ["Ops", "Sales"]
        });
        Ok((tree, data))
    }

    fn submit(
        require_all: bool,
        body: &str,
    ) -> Result<Result<Value, FieldErrors>, Box<dyn std::error::Error>> {
        let (tree, data) = page(require_all)?;
        let offered = Offered::of_page(&tree, &Catalog::defaults(), &data);
        Ok(decode_offered(&schema()?, &offered, body.as_bytes()))
    }

    #[test]
    fn offered_values_from_every_row_are_accepted_as_before() -> TestResult {
        // m3 is on the table's third page: offered all the same.
        assert_eq!(
            submit(
                false,
                "approved_ids=C1&rejected_ids=C2&archive=m1&archive=m3&note=free+text&team=Sales"
            )?,
            Ok(
                json!({"approved_ids": ["C1"], "rejected_ids": ["C2"], "archive": ["m1", "m3"], "note": "free text", "team": "Sales"})
            )
        );
        Ok(())
    }

    #[test]
    fn a_value_never_offered_is_refused_on_its_field() -> TestResult {
        let Err(errors) = submit(false, "approved_ids=C1&approved_ids=NEVER-SHOWN-999")? else {
            return Err("a never-offered id was accepted".into());
        };
        let message = errors.get("approved_ids").unwrap_or_default();
        assert!(message.contains("NEVER-SHOWN-999"), "{message}");
        assert_eq!(errors.len(), 1);
        let Err(errors) = submit(false, "archive=m9")? else {
            return Err("a never-offered row was accepted".into());
        };
        assert!(errors.contains("archive"));
        let Err(errors) = submit(false, "team=Legal")? else {
            return Err("an option the bound list lacks was accepted".into());
        };
        assert!(errors.contains("team"));
        Ok(())
    }

    #[test]
    fn one_row_under_two_decision_arrays_is_refused() -> TestResult {
        let Err(errors) = submit(false, "approved_ids=C1&rejected_ids=C1")? else {
            return Err("a row under both arrays was accepted".into());
        };
        let message = errors.get("rejected_ids").unwrap_or_default();
        assert!(
            message.contains("Approve") && message.contains("Reject"),
            "{message}"
        );
        Ok(())
    }

    #[test]
    fn require_all_refuses_an_undecided_row_and_names_it() -> TestResult {
        let Err(errors) = submit(true, "approved_ids=C1&rejected_ids=C2")? else {
            return Err("an undecided row was accepted under requireAll".into());
        };
        let message = errors.get("approved_ids").unwrap_or_default();
        assert!(message.contains("“C3”"), "{message}");
        assert!(submit(true, "approved_ids=C1&rejected_ids=C2&rejected_ids=C3")?.is_ok());
        assert!(
            submit(false, "approved_ids=C1")?.is_ok(),
            "without requireAll a row may stay undecided"
        );
        Ok(())
    }

    #[test]
    fn a_field_also_placed_as_free_input_has_no_closed_set() {
        let placed = |options: Option<Arc<[String]>>| PlacedField {
            node: "n".into(),
            component: "X".into(),
            name: "note".into(),
            label: "Note".into(),
            yields: tessera_app::catalog::FieldYield::String,
            options,
            required: false,
            inside_form: true,
            row_choice: None,
        };
        let offered =
            Offered::from_fields(&[placed(Some(Arc::from(vec!["a".to_owned()]))), placed(None)]);
        assert!(offered.values_of("note").is_none());
    }

    #[test]
    fn a_long_crafted_value_is_cut_in_the_message() {
        let long = "x".repeat(500);
        assert!(quoted(&long).chars().count() <= QUOTED_CHARS + 1);
    }
}
