//! The props of the structure components — `Fieldset` for an object, `RecordList` for a list of
//! records — derived from the response schema by code when a node is placed.
//!
//! A model names the object or the list and, for a list, the record fields it shows (and which
//! are read-only); everything the schema decides — legends and labels from titles, each column's
//! control (input type, options, bounds, step, required, pattern, default), `min_items`,
//! `max_items`, what one record is called — is written here and overrides whatever the call
//! said, so a page cannot offer a control the schema would refuse (invariant 6).

use serde::Deserialize as _;
use serde_json::{json, Map, Value};
use tessera_app::components::{
    paging::DEFAULT_PAGE_SIZE,
    record_list::{default_layout, RecordColumn},
};

use crate::forms::{answerable, humanize, FieldKind, FormField, FormSchema};

/// How many options a record's choice may have and still be radio buttons in its row.
const RADIO_OPTIONS: usize = 3;

/// The schema field at a control's path (`address.city`, `line_items[2].quantity`, or a record
/// member without its index, `line_items.quantity`), walking objects and lists of records.
#[must_use]
pub fn field_at<'s>(schema: &'s FormSchema, path: &str) -> Option<&'s FormField> {
    let mut members: &[FormField] = &schema.fields;
    let mut found = None;
    for segment in path.split('.') {
        let name = segment.split('[').next().unwrap_or(segment);
        let field = members.iter().find(|field| field.name == name)?;
        members = field.kind.members();
        found = Some(field);
    }
    found
}

/// The label of a field for a person: its title, else its name made readable.
fn title_of(field: &FormField) -> String {
    field
        .title
        .clone()
        .filter(|title| !title.trim().is_empty())
        .unwrap_or_else(|| humanize(&field.name))
}

/// The description of a field, trimmed, when it has one.
fn description_of(field: &FormField) -> Option<String> {
    field
        .description
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// What one record of a list is called: the list's title (else its name) made singular and
/// readable (`line_items` → "Line item", "New hires" → "New hire", `addresses` → "Address").
#[must_use]
pub fn item_label(list: &FormField) -> String {
    let words = title_of(list);
    let singular = if let Some(stem) = words.strip_suffix("ies") {
        format!("{stem}y")
    } else if words.ends_with("sses")
        || words.ends_with("xes")
        || words.ends_with("ches")
        || words.ends_with("shes")
    {
        words[..words.len() - 2].to_owned()
    } else if words.ends_with('s') && !words.ends_with("ss") {
        words[..words.len() - 1].to_owned()
    } else {
        words
    };
    if singular.trim().is_empty() {
        "Record".to_owned()
    } else {
        singular
    }
}

/// The props code decides for a `Fieldset` over the object `field`.
#[must_use]
pub fn fieldset_props(field: &FormField) -> Map<String, Value> {
    let mut props = Map::new();
    props.insert("legend".into(), json!(title_of(field)));
    if let Some(description) = description_of(field) {
        props.insert("description".into(), json!(description));
    }
    props
}

/// Every record member a list can show as a column, objects opened into their members
/// (`dimensions.width`), each with the legend of the object it sits in.
#[must_use]
pub fn record_columns(list: &FormField) -> Vec<(String, &FormField, Option<String>)> {
    let mut columns = Vec::new();
    collect_columns(list.kind.members(), "", None, &mut columns);
    columns
}

fn collect_columns<'f>(
    members: &'f [FormField],
    prefix: &str,
    group: Option<&str>,
    columns: &mut Vec<(String, &'f FormField, Option<String>)>,
) {
    for member in members {
        let path = format!("{prefix}{}", member.name);
        match &member.kind {
            FieldKind::Object { fields } => {
                let legend = title_of(member);
                collect_columns(fields, &format!("{path}."), Some(&legend), columns);
            }
            FieldKind::RecordList { .. } => {}
            _ => columns.push((path, member, group.map(str::to_owned))),
        }
    }
}

/// One column's control, derived from the record member `member`.
#[must_use]
pub fn column_control(member: &FormField) -> Map<String, Value> {
    let (input, component) = match &member.kind {
        FieldKind::Enum { options } if options.len() <= RADIO_OPTIONS => ("radio", "RadioGroup"),
        FieldKind::Enum { .. } => ("select", "Select"),
        FieldKind::Boolean => ("checkbox", "Checkbox"),
        FieldKind::EnumArray { .. } => ("checkboxes", "CheckboxGroup"),
        FieldKind::StringArray { .. } => ("list", "MultiTextInput"),
        FieldKind::String {
            max_length,
            format: None,
            ..
        } if max_length.is_some_and(|longest| longest > 200) => ("textarea", "TextArea"),
        _ => ("", "Input"),
    };
    let derived = answerable::schema_props(component, member);
    let mut column = Map::new();
    let input = if input.is_empty() {
        derived
            .get("type")
            .and_then(Value::as_str)
            .map_or("text", |kind| match kind {
                "email" | "url" | "date" | "number" => kind,
                _ => "text",
            })
    } else {
        input
    };
    column.insert("input".into(), json!(input));
    for (from, to) in [
        ("label", "label"),
        ("help", "help"),
        ("required", "required"),
        ("min", "min"),
        ("max", "max"),
        ("step", "step"),
        ("pattern", "pattern"),
        ("minLength", "min_length"),
        ("maxLength", "max_length"),
    ] {
        if let Some(value) = derived.get(from) {
            column.insert(to.into(), value.clone());
        }
    }
    if let FieldKind::Enum { options } | FieldKind::EnumArray { options, .. } = &member.kind {
        column.insert(
            "options".into(),
            Value::Array(
                options
                    .iter()
                    .map(|value| json!({"value": value, "label": humanize(value)}))
                    .collect(),
            ),
        );
    }
    if let Some(default) = member.default.clone() {
        column.insert("default".into(), default);
    }
    column
}

/// A `RecordList`'s props with everything the schema decides written over what the call said
/// (see the module docs): the columns keep their `field`, `read_only` and a label the call gave;
/// without columns, every record member is one.
#[must_use]
pub fn complete_record_list(list: &FormField, props: &Value) -> Value {
    let mut props = props.as_object().cloned().unwrap_or_default();
    let members = record_columns(list);
    props
        .entry("label")
        .or_insert_with(|| json!(title_of(list)));
    if let Some(description) = description_of(list) {
        props
            .entry("description")
            .or_insert_with(|| json!(description));
    }
    props.insert("item_label".into(), json!(item_label(list)));
    if let FieldKind::RecordList {
        min_items,
        max_items,
        ..
    } = &list.kind
    {
        props.remove("min_items");
        props.remove("max_items");
        props.remove("minItems");
        props.remove("maxItems");
        if let Some(min) = min_items {
            props.insert("min_items".into(), json!(min));
        }
        if let Some(max) = max_items {
            props.insert("max_items".into(), json!(max));
        }
    }
    let given: Vec<Value> = match props.get("columns") {
        Some(Value::Array(columns)) if !columns.is_empty() => columns.clone(),
        _ => members
            .iter()
            .map(|(path, _, _)| json!({ "field": path }))
            .collect(),
    };
    let columns: Vec<Value> = given
        .into_iter()
        .map(|column| {
            let Some(field) = column.get("field").and_then(Value::as_str) else {
                return column;
            };
            let Some((_, member, group)) = members.iter().find(|(path, _, _)| path == field) else {
                return column;
            };
            let mut derived = column_control(member);
            if let Some(label) = column
                .get("label")
                .and_then(Value::as_str)
                .filter(|label| !label.trim().is_empty())
            {
                derived.insert("label".into(), json!(label));
            }
            derived.insert("field".into(), json!(field));
            let read_only = column
                .get("read_only")
                .or_else(|| column.get("readOnly"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if read_only {
                derived.insert("read_only".into(), json!(true));
            }
            if let Some(group) = group {
                derived.insert("group".into(), json!(group));
            }
            Value::Object(derived)
        })
        .collect();
    // Code decides how records are laid out and paged, from what they hold.
    let typed: Vec<RecordColumn> = columns
        .iter()
        .filter_map(|column| RecordColumn::deserialize(column).ok())
        .collect();
    props.insert("layout".into(), json!(default_layout(&typed)));
    props
        .entry("page_size")
        .or_insert_with(|| json!(DEFAULT_PAGE_SIZE));
    props.insert("columns".into(), Value::Array(columns));
    Value::Object(props)
}

/// What code writes into a structure component's props for `field` (`Fieldset` over an object,
/// `RecordList` over a list of records); empty for anything else.
#[must_use]
pub fn derived_props(component: &str, field: &FormField) -> Map<String, Value> {
    match (component, &field.kind) {
        ("Fieldset", FieldKind::Object { .. }) => fieldset_props(field),
        ("RecordList", FieldKind::RecordList { .. }) => {
            match complete_record_list(field, &json!({ "name": field.name })) {
                Value::Object(props) => props,
                _ => Map::new(),
            }
        }
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invoice() -> FormSchema {
        FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "line_items": {
                    "type": "array", "title": "Line items", "minItems": 1, "maxItems": 20,
                    "items": {"type": "object", "properties": {
                        "sku": {"type": "string", "title": "SKU"},
                        "quantity": {"type": "integer", "minimum": 1, "title": "Quantity"},
                        "unit_price": {"type": "number", "minimum": 0, "multipleOf": 0.01},
                        "status": {"type": "string", "enum": ["ok", "damaged"]}
                    }, "required": ["sku", "quantity", "unit_price"]}
                },
                "address": {"type": "object", "title": "Delivery address",
                    "properties": {"city": {"type": "string"}}, "required": ["city"]}
            },
            "required": ["line_items"]
        }))
        .unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn paths_find_members_of_objects_and_records() {
        let schema = invoice();
        assert_eq!(
            field_at(&schema, "line_items[2].quantity").map(|field| field.name.as_str()),
            Some("quantity")
        );
        assert_eq!(
            field_at(&schema, "address.city").map(|field| field.name.as_str()),
            Some("city")
        );
        assert!(field_at(&schema, "address.street").is_none());
    }

    #[test]
    fn a_record_list_call_gets_its_controls_and_bounds_from_the_schema_not_the_model() {
        let schema = invoice();
        let Some(list) = field_at(&schema, "line_items") else {
            panic!("no list");
        };
        let props = complete_record_list(
            list,
            &json!({"name": "line_items", "max_items": 500, "columns": [
                {"field": "sku", "read_only": true},
                {"field": "quantity", "input": "text", "required": false},
                {"field": "unit_price", "label": "Price each"},
                {"field": "status"}
            ]}),
        );
        assert_eq!(props["min_items"], json!(1));
        assert_eq!(props["max_items"], json!(20));
        assert_eq!(props["item_label"], json!("Line item"));
        assert_eq!(props["label"], json!("Line items"));
        let columns = &props["columns"];
        assert_eq!(columns[0]["read_only"], json!(true));
        assert_eq!(columns[0]["label"], json!("SKU"));
        assert_eq!(columns[1]["input"], json!("number"));
        assert_eq!(columns[1]["required"], json!(true));
        assert_eq!(columns[1]["min"], json!(1));
        assert_eq!(columns[2]["label"], json!("Price each"));
        assert_eq!(columns[2]["step"], json!(0.01));
        assert_eq!(columns[3]["input"], json!("radio"));
        assert_eq!(columns[3]["options"][1]["value"], json!("damaged"));
        let checked = tessera_app::catalog::Catalog::defaults()
            .get("RecordList")
            .map(|spec| (spec.validate)(&props));
        assert_eq!(checked, Some(Ok(())), "{props}");
    }

    #[test]
    fn records_are_called_by_their_list_made_singular() {
        for (name, expected) in [
            ("line_items", "Line item"),
            ("new_hires", "New hire"),
            ("addresses", "Address"),
            ("parcels", "Parcel"),
            ("cost_centre_budget", "Cost centre budget"),
            ("entries", "Entry"),
        ] {
            let field = FormField::new(name, FieldKind::Boolean);
            assert_eq!(item_label(&field), expected);
        }
    }
}
