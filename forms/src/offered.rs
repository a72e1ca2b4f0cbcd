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
    binding::{value_text, BoundProps},
    catalog::{Catalog, RowChoice},
    components::record_list::RecordListProps,
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
    /// What each `RecordList` offers inside its records, by the list's path.
    records: BTreeMap<String, RecordOffer>,
}

/// What one `RecordList` offers: the data rows its records are bound to, which fields travel
/// unchanged, and the choices of its choice columns.
#[derive(Clone, Debug, Default)]
struct RecordOffer {
    /// The data rows records are bound to; `None` when the person starts from blank records.
    rows: Option<Vec<Value>>,
    /// The record field that names a bound row; without one, record `i` is row `i`.
    key: Option<String>,
    /// Record fields shown as text and sent unchanged (paths inside the record).
    read_only: Vec<String>,
    /// Record fields with a closed set of choices, with the choices.
    choices: Vec<(String, Vec<String>)>,
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
            records: BTreeMap::new(),
        }
    }

    /// What `tree` offers over `data`, with the components of `catalog` (the ones it renders with):
    /// the fields' closed sets and, for each `RecordList`, what its records may hold.
    #[must_use]
    pub fn of_page(tree: &PageTree, catalog: &Catalog, data: &Value) -> Self {
        let mut offered = Self::from_fields(&tree.fields(catalog, data));
        for node in tree.nodes.values() {
            if node.component != "RecordList" || catalog.get(&node.component).is_none() {
                continue;
            }
            // Bound rows are read through the binding; the rest of the props as the model gave them.
            let mut literal = node.props.clone();
            let bound_rows = BoundProps {
                props: &node.props,
                data,
            }
            .rows("rows");
            if bound_rows.is_some() {
                if let Some(props) = literal.as_object_mut() {
                    props.remove("rows");
                }
            }
            let Ok(props) = serde_json::from_value::<RecordListProps>(literal) else {
                continue;
            };
            let rows = bound_rows
                .map(<[Value]>::to_vec)
                .or_else(|| props.rows.clone());
            let offer = RecordOffer {
                rows,
                key: props.key.clone(),
                read_only: props
                    .columns
                    .iter()
                    .filter(|column| column.read_only)
                    .map(|column| column.field.clone())
                    .collect(),
                choices: props
                    .columns
                    .iter()
                    .filter_map(|column| {
                        let options = column.options.as_ref()?;
                        let values = options.iter().map(|choice| choice.value().to_owned());
                        Some((column.field.clone(), values.collect()))
                    })
                    .collect(),
            };
            offered.records.entry(props.name).or_insert(offer);
        }
        offered
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
        for (list, offer) in &self.records {
            let label = schema
                .field_at(list)
                .map_or_else(|| list.clone(), super::FormField::label);
            match value_at(answer, list) {
                Some(Value::Array(records)) => offer.check(list, &label, records, &mut errors),
                // Absent is no records: a bound list still owes each of its rows.
                None => offer.check(list, &label, &[], &mut errors),
                Some(_) => {}
            }
        }
        errors.into_result(())
    }
}

impl RecordOffer {
    /// Checks the records of the list at `list`: bound records name offered rows once each and
    /// keep their read-only values; choices stay among the offered ones; a bound list holds
    /// exactly its rows (it offers no add or remove button: the rows are what is asked about).
    fn check(&self, list: &str, label: &str, records: &[Value], errors: &mut FieldErrors) {
        if let Some(rows) = &self.rows {
            if records.len() != rows.len() {
                errors.add(
                    list,
                    format!(
                        "{label} must hold each of the {} lines this page shows, not {}",
                        rows.len(),
                        records.len()
                    ),
                );
                return;
            }
        }
        let mut keys_seen = HashSet::new();
        for (index, record) in records.iter().enumerate() {
            let line = index + 1;
            let path = |field: &str| format!("{list}[{index}].{field}");
            let row = match (&self.rows, &self.key) {
                (Some(rows), Some(key)) => {
                    let sent = member(record, key).map(key_text).unwrap_or_default();
                    if !keys_seen.insert(sent.clone()) {
                        errors.add(
                            path(key),
                            format!("Line {line} of {label} repeats a line this page shows once"),
                        );
                        continue;
                    }
                    let found = rows
                        .iter()
                        .find(|row| member(row, key).map(key_text).as_deref() == Some(&sent));
                    if found.is_none() {
                        errors.add(
                            path(key),
                            format!(
                                "Line {line} of {label} names “{}”, which this page does not show",
                                quoted(&sent)
                            ),
                        );
                        continue;
                    }
                    found
                }
                (Some(rows), None) => rows.get(index),
                (None, _) => None,
            };
            if let Some(row) = row {
                for field in &self.read_only {
                    let sent = member(record, field);
                    if !same_value(sent, member(row, field)) {
                        errors.add(
                            path(field),
                            format!(
                                "Line {line} of {label} changed a value this page shows as fixed"
                            ),
                        );
                    }
                }
            }
            for (field, options) in &self.choices {
                let sent = strings(member(record, field));
                if let Some(stray) = sent
                    .iter()
                    .find(|value| !options.iter().any(|option| option == *value))
                {
                    errors.add(
                        path(field),
                        format!(
                            "Line {line} of {label} can only hold what this page offers, and “{}” is not one of them",
                            quoted(stray)
                        ),
                    );
                }
            }
        }
    }
}

/// The value at a dotted path (`dimensions.width`) inside a record or row.
fn member<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.')
        .try_fold(value, |inner, name| inner.get(name))
}

/// The value of the list at a dotted path (`order.parcels`) of an answer.
fn value_at<'v>(answer: &'v Map<String, Value>, path: &str) -> Option<&'v Value> {
    let mut names = path.split('.');
    let first = answer.get(names.next()?)?;
    names.try_fold(first, |inner, name| inner.get(name))
}

/// A key as text, so a row id written `7` in the data matches `"7"` typed into a text control.
fn key_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Whether a read-only value came back as the page showed it: numbers by value (`61` and `61.0`
/// are one price), everything else as the text the hidden input carried; an empty or missing
/// value matches a missing one.
fn same_value(sent: Option<&Value>, shown: Option<&Value>) -> bool {
    let text = |value: Option<&Value>| value.map(value_text).unwrap_or_default();
    match (sent, shown) {
        (Some(Value::Number(sent)), Some(Value::Number(shown))) => sent.as_f64() == shown.as_f64(),
        _ => text(sent) == text(shown),
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

    /// The invoice correction page: items bound to data by `sku`, the description read-only, a
    /// unit to choose; `bound` false gives blank records the person adds.
    fn invoice_submit(
        bound: bool,
        body: &str,
    ) -> Result<Result<Value, FieldErrors>, Box<dyn std::error::Error>> {
        let schema = FormSchema::from_json_schema(&json!({"type": "object", "properties": {
            "line_items": {"type": "array", "items": {"type": "object", "properties": {
                "sku": {"type": "string"},
                "description": {"type": "string"},
                "quantity": {"type": "integer"},
                "unit": {"type": "string", "enum": ["piece", "box", "pallet"]}
            }, "required": ["sku", "quantity"]}}
        }, "required": ["line_items"]}))?;
        let mut list = json!({
            "name": "line_items", "key": "sku",
            "columns": [
                {"field": "sku", "read_only": true},
                {"field": "description", "read_only": true},
                {"field": "quantity", "input": "number"},
                {"field": "unit", "input": "select", "options": ["piece", "box"]}
            ]
        });
        if bound {
            list["rows"] = json!({"$data": "/items"});
        }
        let tree: PageTree = serde_json::from_value(json!({"nodes": {
            "f": {"component": "Form", "props": {}, "children": ["r"]},
            "r": {"component": "RecordList", "props": list}
        }}))?;
        let data = json!({"items": [
            {"sku": "A-100", "description": "Paper", "quantity": 10},
            {"sku": "B-220", "description": "Toner", "quantity": 2}
        ]});
        let offered = Offered::of_page(&tree, &Catalog::defaults(), &data);
        Ok(decode_offered(&schema, &offered, body.as_bytes()))
    }

    const TWO_LINES: &str = "_count.line_items=2&line_items[0].sku=B-220&line_items[0].description=Toner\
        &line_items[0].quantity=3&line_items[1].sku=A-100&line_items[1].description=Paper&line_items[1].quantity=9";

    #[test]
    fn bound_records_with_offered_keys_and_unchanged_read_only_values_are_accepted() -> TestResult {
        assert_eq!(
            invoice_submit(true, &format!("{TWO_LINES}&line_items[0].unit=box"))?,
            Ok(json!({"line_items": [
                {"sku": "B-220", "description": "Toner", "quantity": 3, "unit": "box"},
                {"sku": "A-100", "description": "Paper", "quantity": 9}
            ]}))
        );
        Ok(())
    }

    #[test]
    fn a_crafted_key_a_repeated_key_or_a_changed_read_only_value_is_refused_at_its_path(
    ) -> TestResult {
        let crafted = TWO_LINES.replace("line_items[1].sku=A-100", "line_items[1].sku=Z-999");
        let errors = invoice_submit(true, &crafted)?.err().unwrap_or_default();
        assert_eq!(
            errors.get("line_items[1].sku"),
            Some("Line 2 of Line items names “Z-999”, which this page does not show")
        );
        let repeated = TWO_LINES.replace("line_items[1].sku=A-100", "line_items[1].sku=B-220");
        let errors = invoice_submit(true, &repeated)?.err().unwrap_or_default();
        assert_eq!(
            errors.get("line_items[1].sku"),
            Some("Line 2 of Line items repeats a line this page shows once")
        );
        let changed = TWO_LINES.replace("description=Toner", "description=Gold");
        let errors = invoice_submit(true, &changed)?.err().unwrap_or_default();
        assert_eq!(
            errors.get("line_items[0].description"),
            Some("Line 1 of Line items changed a value this page shows as fixed")
        );
        Ok(())
    }

    #[test]
    fn a_bound_list_neither_gains_nor_loses_records_and_choices_stay_among_the_offered_ones(
    ) -> TestResult {
        let extra = format!(
            "{}&line_items[2].sku=C-1&line_items[2].quantity=1",
            TWO_LINES.replace("_count.line_items=2", "_count.line_items=3")
        );
        let errors = invoice_submit(true, &extra)?.err().unwrap_or_default();
        assert_eq!(
            errors.get("line_items"),
            Some("Line items must hold each of the 2 lines this page shows, not 3")
        );
        // Nor loses one: the page offers no remove button on rows it asks about.
        let one = "_count.line_items=1&line_items[0].sku=B-220&line_items[0].description=Toner\
            &line_items[0].quantity=3";
        let errors = invoice_submit(true, one)?.err().unwrap_or_default();
        assert_eq!(
            errors.get("line_items"),
            Some("Line items must hold each of the 2 lines this page shows, not 1")
        );
        let pallet = format!("{TWO_LINES}&line_items[1].unit=pallet");
        let errors = invoice_submit(true, &pallet)?.err().unwrap_or_default();
        assert_eq!(
            errors.get("line_items[1].unit"),
            Some("Line 2 of Line items can only hold what this page offers, and “pallet” is not one of them")
        );
        let blank = "_count.line_items=3&line_items[0].sku=X&line_items[0].quantity=1\
            &line_items[1].sku=Y&line_items[1].quantity=1&line_items[2].sku=Z&line_items[2].quantity=1";
        assert!(invoice_submit(false, blank)?.is_ok());
        Ok(())
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
