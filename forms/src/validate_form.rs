//! `ValidateForm`: proves that the fields placed in a page tree yield exactly the JSON a response
//! schema wants (DESIGN.md §5).
//!
//! The report is for a model to act on: every issue names the node, the field, a stable rule code,
//! what is wrong and a one-line fix. Errors make the page unusable for the schema; warnings are
//! page-quality problems (labels, headings, destructive buttons) a model should fix but that do not
//! block. Besides the structural rules, the check *runs the real decoder* on sample submissions
//! built from the placed fields (every option of every closed field, optional fields left empty)
//! and checks each decoded value's shape against the schema — the proof is the decoder itself, not
//! a second opinion about it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};
use tessera_app::{
    catalog::{Catalog, FieldYield},
    tree::{BoundData, PageTree, PlacedField},
};

use super::{
    answerable, decode_values, validate::is_multiple_of, FieldKind, FormField, FormSchema,
};

/// One finding, written so a model can fix it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FormIssue {
    /// The node at fault, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The schema field concerned, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// A stable `snake_case` rule code.
    pub rule: &'static str,
    /// What is wrong.
    pub message: String,
    /// One line saying what to do.
    pub fix: String,
}

/// The outcome of `ValidateForm`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FormReport {
    /// True when there are no errors: every possible submission decodes to the schema's shape.
    pub ok: bool,
    /// Problems that make the page wrong for the schema.
    pub errors: Vec<FormIssue>,
    /// Page-quality problems that do not block.
    pub warnings: Vec<FormIssue>,
}

fn issue(
    node: Option<&str>,
    field: Option<&str>,
    rule: &'static str,
    message: String,
    fix: String,
) -> FormIssue {
    FormIssue {
        node: node.map(str::to_owned),
        field: field.map(str::to_owned),
        rule,
        message,
        fix,
    }
}

/// Checks `tree` against `schema` (or, for display-only pages, checks it is a non-empty valid tree).
#[must_use]
pub fn validate_form(
    tree: &PageTree,
    catalog: &Catalog,
    schema: Option<&FormSchema>,
    data: &Value,
) -> FormReport {
    validate_form_bound(tree, catalog, schema, &BoundData::new(data))
}

/// [`validate_form`] against `bound`: nodes it has already worked out against the data are not
/// resolved and checked again (the agent loop checks after every turn over the same data).
#[must_use]
pub fn validate_form_bound(
    tree: &PageTree,
    catalog: &Catalog,
    schema: Option<&FormSchema>,
    bound: &BoundData<'_>,
) -> FormReport {
    let mut errors: Vec<FormIssue> = tree
        .validate_bound(catalog, bound)
        .into_iter()
        .map(|tree_issue| FormIssue {
            node: tree_issue.node,
            field: tree_issue.field,
            rule: tree_issue.rule,
            message: tree_issue.message,
            fix: tree_issue.fix,
        })
        .collect();
    if tree.is_empty() {
        errors.push(issue(
            None,
            None,
            "empty_page",
            "the page has no components".into(),
            "place at least a Heading and the content the prompt asks for".into(),
        ));
    }
    let fields = tree.fields_bound(catalog, bound);
    if let Some(schema) = schema {
        check_against_schema(tree, schema, &fields, catalog, bound, &mut errors);
        if errors.is_empty() {
            prove_by_decoding(schema, &fields, &mut errors);
        }
    }
    let warnings = quality_warnings(tree, &fields);
    FormReport {
        ok: errors.is_empty(),
        errors,
        warnings,
    }
}

fn check_against_schema(
    tree: &PageTree,
    schema: &FormSchema,
    fields: &[PlacedField],
    catalog: &Catalog,
    bound: &BoundData<'_>,
    errors: &mut Vec<FormIssue>,
) {
    let forms: Vec<&str> = tree
        .document_order()
        .into_iter()
        .filter(|id| {
            tree.nodes
                .get(*id)
                .is_some_and(|node| node.component == "Form")
        })
        .collect();
    if !schema.fields.is_empty() && forms.is_empty() {
        errors.push(issue(
            None,
            None,
            "no_form",
            "the schema asks for a response but the page has no Form".into(),
            "place a Form and put every field and a submit Button inside it".into(),
        ));
    }
    let mut seen = BTreeSet::new();
    for placed in fields {
        let Some(field) = control_field(schema, &placed.name) else {
            errors.push(issue(
                Some(&placed.node),
                Some(&placed.name),
                "unknown_field",
                format!(
                    "{} `{}` submits `{}`, which is not in the schema",
                    placed.component, placed.node, placed.name
                ),
                format!("rename it to one of: {}, or remove it", field_names(schema)),
            ));
            continue;
        };
        if !seen.insert(placed.name.as_str()) {
            // The tree check reports duplicate names; nothing more to say per field.
            continue;
        }
        if !placed.inside_form {
            errors.push(issue(
                Some(&placed.node),
                Some(&placed.name),
                "field_outside_form",
                format!(
                    "field `{}` is outside the Form, so it is never submitted",
                    placed.name
                ),
                move_into_form(&placed.node, forms.first().copied()),
            ));
        }
        if check_field_type(placed, field, errors) {
            if let FieldKind::RecordList {
                fields: members, ..
            } = &field.kind
            {
                check_record_columns(tree, placed, members, errors);
            } else {
                check_answerable(tree, catalog, placed, field, bound, errors);
            }
        }
    }
    for (path, field) in control_paths(schema) {
        if !fields.iter().any(|placed| placed.name == path) {
            let within = path
                .rsplit_once('.')
                .map(|(object, _)| format!(" (in a Fieldset named `{object}`)"))
                .unwrap_or_default();
            errors.push(issue(
                None,
                Some(&path),
                "missing_field",
                format!(
                    "schema field `{path}` ({}) has no component",
                    describe_kind(&field.kind)
                ),
                format!(
                    "place {} named `{path}` inside the Form{within}",
                    suggest_component(field),
                ),
            ));
        }
    }
    let has_submit = forms.iter().any(|form| {
        tree.document_order().into_iter().any(|id| {
            tree.ancestors(id).contains(form)
                && tree.nodes.get(id).is_some_and(|node| {
                    node.component == "Button"
                        && node
                            .props
                            .get("kind")
                            .and_then(Value::as_str)
                            .unwrap_or("submit")
                            == "submit"
                })
        })
    });
    if !forms.is_empty() && !has_submit {
        errors.push(issue(
            Some(forms[0]),
            None,
            "no_submit_button",
            "the Form has no submit Button".into(),
            "place a Button with kind \"submit\" inside the Form".into(),
        ));
    }
}

/// The schema field a control named `name` submits: a top-level field, or an object's member
/// named by its path (`address.city`). Record fields are a `RecordList`'s, never a control's.
fn control_field<'s>(schema: &'s FormSchema, name: &str) -> Option<&'s FormField> {
    let mut names = name.split('.');
    let first = schema.field(names.next()?)?;
    names.try_fold(first, |field, member| match &field.kind {
        FieldKind::Object { fields } => fields.iter().find(|inner| inner.name == member),
        _ => None,
    })
}

/// Every path that needs a control of its own: each flat field, each object's members (by path)
/// and each list of records (one `RecordList`), in schema order.
fn control_paths(schema: &FormSchema) -> Vec<(String, &FormField)> {
    fn walk<'s>(fields: &'s [FormField], prefix: &str, found: &mut Vec<(String, &'s FormField)>) {
        for field in fields {
            let path = format!("{prefix}{}", field.name);
            match &field.kind {
                FieldKind::Object { fields: members } => walk(members, &format!("{path}."), found),
                _ => found.push((path, field)),
            }
        }
    }
    let mut found = Vec::new();
    walk(&schema.fields, "", &mut found);
    found
}

/// Every field of a record, by its path inside the record (`quantity`, `dimensions.width`).
fn record_paths(members: &[FormField]) -> Vec<(String, &FormField)> {
    let mut found = Vec::new();
    for member in members {
        match &member.kind {
            FieldKind::Object { fields } => {
                for (path, inner) in record_paths(fields) {
                    found.push((format!("{}.{path}", member.name), inner));
                }
            }
            _ => found.push((member.name.clone(), member)),
        }
    }
    found
}

/// A `RecordList`'s columns against the record's fields: each field has a column (a read-only
/// one covers it too, its value travelling hidden), no column names something else, and a
/// read-only column of a required field has bound rows to take its value from.
fn check_record_columns(
    tree: &PageTree,
    placed: &PlacedField,
    members: &[FormField],
    errors: &mut Vec<FormIssue>,
) {
    let Some(node) = tree.nodes.get(&placed.node) else {
        return;
    };
    let columns: Vec<(String, bool)> = node
        .props
        .get("columns")
        .and_then(Value::as_array)
        .map(|columns| {
            columns
                .iter()
                .filter_map(|column| {
                    let field = column.get("field")?.as_str()?.to_owned();
                    let read_only = column
                        .get("read_only")
                        .or_else(|| column.get("readOnly"))
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    Some((field, read_only))
                })
                .collect()
        })
        .unwrap_or_default();
    let has_rows = node.props.get("rows").is_some_and(|rows| !rows.is_null());
    let paths = record_paths(members);
    let list = &placed.name;
    for (column, read_only) in &columns {
        let Some((_, member)) = paths.iter().find(|(path, _)| path == column) else {
            errors.push(issue(
                Some(&placed.node),
                Some(list),
                "unknown_record_field",
                format!("RecordList `{}` has a column `{column}`, which records of `{list}` do not have", placed.node),
                format!(
                    "name columns after the record's fields: {}",
                    paths.iter().map(|(path, _)| format!("`{path}`")).collect::<Vec<_>>().join(", ")
                ),
            ));
            continue;
        };
        if *read_only && !has_rows && member.required {
            errors.push(issue(
                Some(&placed.node),
                Some(&format!("{list}[].{column}")),
                "read_only_without_rows",
                format!("column `{column}` of RecordList `{}` is read-only, but no rows give its value and `{list}[].{column}` is required", placed.node),
                "bind `rows` to the data rows the records correct, or make the column editable".into(),
            ));
        }
    }
    for (path, member) in &paths {
        if !columns.iter().any(|(column, _)| column == path) {
            errors.push(issue(
                Some(&placed.node),
                Some(&format!("{list}[].{path}")),
                "missing_record_field",
                format!(
                    "records of `{list}` have `{path}` ({}), but RecordList `{}` has no column for it",
                    describe_kind(&member.kind),
                    placed.node
                ),
                format!("add {{\"field\": \"{path}\"}} to the columns (with \"read_only\": true to show it unchanged)"),
            ));
        }
    }
}

/// The fix for a field outside the Form: the `MoveComponent` call that moves it in (the agent's
/// tool; the name is written out because forms know nothing of the agent).
fn move_into_form(node: &str, form: Option<&str>) -> String {
    match form {
        Some(form) => format!(
            "move it into the Form: call MoveComponent with {{\"id\": \"{node}\", \"parent\": \"{form}\"}}"
        ),
        None => format!(
            "place a Form, then move it in: call MoveComponent with {{\"id\": \"{node}\", \"parent\": <the Form's id>}}"
        ),
    }
}

/// The answerability rules (`forms::answerable::check`) on the node's props as rendered.
fn check_answerable(
    tree: &PageTree,
    catalog: &Catalog,
    placed: &PlacedField,
    field: &FormField,
    bound: &BoundData<'_>,
    errors: &mut Vec<FormIssue>,
) {
    let Some(node) = tree.nodes.get(&placed.node) else {
        return;
    };
    let Some(spec) = catalog.get(&node.component) else {
        return;
    };
    let facts = bound.facts(spec, &node.props);
    for found in answerable::check(
        &placed.component,
        &facts.resolved,
        placed.options.as_deref(),
        field,
    ) {
        errors.push(issue(
            Some(&placed.node),
            Some(&placed.name),
            found.rule,
            found.message,
            found.fix,
        ));
    }
}

/// Whether the component yields the field's type (else an error is recorded).
fn check_field_type(placed: &PlacedField, field: &FormField, errors: &mut Vec<FormIssue>) -> bool {
    let compatible = matches!(
        (&field.kind, placed.yields),
        (
            FieldKind::String { .. } | FieldKind::Enum { .. },
            FieldYield::String
        ) | (
            FieldKind::Number { .. },
            FieldYield::Number | FieldYield::Integer
        ) | (FieldKind::Integer { .. }, FieldYield::Integer)
            | (FieldKind::Boolean, FieldYield::Boolean)
            | (
                FieldKind::StringArray { .. } | FieldKind::EnumArray { .. },
                FieldYield::StringArray
            )
            | (FieldKind::RecordList { .. }, FieldYield::Records)
    );
    if !compatible {
        errors.push(issue(
            Some(&placed.node),
            Some(&placed.name),
            "type_mismatch",
            format!(
                "{} `{}` yields {:?} but `{}` is {}",
                placed.component,
                placed.node,
                placed.yields,
                field.name,
                describe_kind(&field.kind)
            ),
            format!("replace it with {}", suggest_component(field)),
        ));
        return false;
    }
    if let Some(allowed) = field.kind.options() {
        match &placed.options {
            None => errors.push(issue(
                Some(&placed.node),
                Some(&placed.name),
                "free_input_for_enum",
                format!(
                    "`{}` must be one of {}, but {} `{}` accepts free text",
                    field.name,
                    allowed.join(", "),
                    placed.component,
                    placed.node
                ),
                format!(
                    "use {} with options taken from the enum",
                    suggest_component(field)
                ),
            )),
            Some(options) => {
                let outside: Vec<&str> = options
                    .iter()
                    .filter(|option| !allowed.contains(option))
                    .map(String::as_str)
                    .collect();
                if !outside.is_empty() {
                    errors.push(issue(
                        Some(&placed.node),
                        Some(&placed.name),
                        "option_outside_enum",
                        format!(
                            "options {} of `{}` are not in the enum ({})",
                            outside.join(", "),
                            placed.node,
                            allowed.join(", ")
                        ),
                        "use only the enum's values as option values (labels may differ)".into(),
                    ));
                }
            }
        }
    }
    let needs_value = match &field.kind {
        FieldKind::String { .. }
        | FieldKind::Number { .. }
        | FieldKind::Integer { .. }
        | FieldKind::Enum { .. } => field.required,
        FieldKind::StringArray { min_items, .. } | FieldKind::EnumArray { min_items, .. } => {
            min_items.is_some_and(|count| count > 0)
        }
        FieldKind::Boolean | FieldKind::Object { .. } | FieldKind::RecordList { .. } => false,
    };
    if needs_value && !placed.required {
        errors.push(issue(
            Some(&placed.node),
            Some(&placed.name),
            "required_can_be_empty",
            format!(
                "`{}` is required but {} `{}` can be left empty",
                field.name, placed.component, placed.node
            ),
            "set `required: true` on the component".into(),
        ));
    }
    true
}

/// Builds sample submissions the way a browser would send them and runs the real decoder on them.
fn prove_by_decoding(schema: &FormSchema, fields: &[PlacedField], errors: &mut Vec<FormIssue>) {
    for sample in sample_submissions(schema, fields) {
        match decode_values(schema, &sample) {
            Ok(decoded) => {
                if let Some(problem) = shape_problem(schema, &decoded) {
                    errors.push(issue(
                        None,
                        Some(&problem.0),
                        "decoded_shape",
                        problem.1,
                        "check the field's component and options against the schema".into(),
                    ));
                    return;
                }
            }
            Err(field_errors) => {
                if let Some((name, message)) = field_errors.0.into_iter().next() {
                    let node = fields
                        .iter()
                        .find(|placed| placed.name == name)
                        .map(|placed| placed.node.as_str());
                    errors.push(issue(
                        node,
                        Some(&name),
                        "sample_does_not_decode",
                        format!("a submission this form allows does not decode: {message}"),
                        "make the component's values match the schema (options, required, number step)".into(),
                    ));
                    return;
                }
            }
        }
    }
}

fn sample_submissions(
    schema: &FormSchema,
    fields: &[PlacedField],
) -> Vec<BTreeMap<String, Vec<String>>> {
    // One sample per option of the widest single-choice field. Multi-choice fields send all their
    // options in the first sample and one option in each later one, so every option is decoded
    // while the work stays linear in the options (a selectable table may have 10,000 rows).
    let widest = fields
        .iter()
        .filter(|placed| placed.yields != FieldYield::StringArray)
        .filter_map(|placed| placed.options.as_ref().map(|options| options.len()))
        .max()
        .unwrap_or(1)
        .max(1);
    let mut samples = Vec::new();
    for variant in 0..widest {
        let mut body = BTreeMap::new();
        for placed in fields {
            let Some(field) = control_field(schema, &placed.name) else {
                continue;
            };
            if let FieldKind::RecordList {
                fields: members,
                min_items,
                max_items,
            } = &field.kind
            {
                sample_records(
                    &mut body,
                    &placed.name,
                    members,
                    *min_items,
                    *max_items,
                    variant,
                );
                continue;
            }
            let values = match &placed.options {
                Some(options) if options.is_empty() => Vec::new(),
                Some(options) if placed.yields == FieldYield::StringArray && variant == 0 => {
                    options.to_vec()
                }
                Some(options) if placed.yields == FieldYield::StringArray => {
                    vec![options[variant % options.len()].clone()]
                }
                Some(options) => vec![options[variant % options.len()].clone()],
                None => vec![field
                    .default
                    .as_ref()
                    .and_then(default_text)
                    .unwrap_or_else(|| free_sample(placed.yields, &field.kind))],
            };
            body.insert(placed.name.clone(), values);
        }
        samples.push(body);
    }
    // Everything a person may leave empty, left empty; records are sent as in the first sample.
    let mut sparse = BTreeMap::new();
    for placed in fields {
        let Some(first) = samples.first() else {
            break;
        };
        if placed.yields == FieldYield::Records {
            let record_prefix = format!("{}[", placed.name);
            let count_key = format!("_count.{}", placed.name);
            for (key, values) in first {
                if key.starts_with(&record_prefix) || *key == count_key {
                    sparse.insert(key.clone(), values.clone());
                }
            }
        } else if placed.required {
            if let Some(values) = first.get(&placed.name) {
                sparse.insert(placed.name.clone(), values.clone());
            }
        }
    }
    samples.push(sparse);
    samples
}

/// The fewest records the list allows (at least one) with every record field filled in, as a
/// `RecordList` sends them: `_count.<list>` and `<list>[i].<field>`.
fn sample_records(
    body: &mut BTreeMap<String, Vec<String>>,
    list: &str,
    members: &[FormField],
    min_items: Option<u64>,
    max_items: Option<u64>,
    variant: usize,
) {
    let count = min_items
        .unwrap_or(1)
        .max(1)
        .min(max_items.unwrap_or(u64::MAX));
    body.insert(format!("_count.{list}"), vec![count.to_string()]);
    for index in 0..count {
        for (path, member) in record_paths(members) {
            let yields = match &member.kind {
                FieldKind::Boolean => FieldYield::Boolean,
                FieldKind::Integer { .. } => FieldYield::Integer,
                FieldKind::Number { .. } => FieldYield::Number,
                _ => FieldYield::String,
            };
            let values = match (&member.kind, member.kind.options()) {
                (_, Some(options)) if !options.is_empty() => {
                    vec![options[variant % options.len()].clone()]
                }
                (FieldKind::StringArray { min_items, .. }, _) => (0..min_items.unwrap_or(1).max(1))
                    .map(|item| format!("sample {item}"))
                    .collect(),
                _ => vec![member
                    .default
                    .as_ref()
                    .and_then(default_text)
                    .unwrap_or_else(|| free_sample(yields, &member.kind))],
            };
            body.insert(format!("{list}[{index}].{path}"), values);
        }
    }
}

fn default_text(default: &Value) -> Option<String> {
    match default {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn free_sample(yields: FieldYield, kind: &FieldKind) -> String {
    match (yields, kind) {
        (FieldYield::Boolean, _) => "on".into(),
        (
            _,
            FieldKind::Integer {
                minimum,
                multiple_of,
                ..
            },
        ) => {
            let step = multiple_of
                .and_then(|step| i64::try_from(step).ok())
                .unwrap_or(1);
            let low = minimum.unwrap_or(step);
            (low.div_euclid(step) * step + if low.rem_euclid(step) == 0 { 0 } else { step })
                .to_string()
        }
        (
            _,
            FieldKind::Number {
                minimum,
                exclusive_minimum,
                multiple_of,
                ..
            },
        ) => {
            let step = multiple_of.unwrap_or(1.0);
            let low = minimum
                .or(exclusive_minimum.map(|bound| bound + step))
                .unwrap_or(step);
            let mut sample = (low / step).ceil() * step;
            if !is_multiple_of(sample, step) || sample < low {
                sample += step;
            }
            sample.to_string()
        }
        (
            _,
            FieldKind::String {
                format: Some(format),
                ..
            },
        ) => match format.as_str() {
            "email" => "person@example.com".into(),
            "url" | "uri" => "https://example.com/".into(),
            "date" => "2026-01-31".into(),
            _ => "2026-01-31T12:00:00Z".into(),
        },
        (FieldYield::Number | FieldYield::Integer, _) => "1".into(),
        _ => "sample text".into(),
    }
}

fn shape_problem(schema: &FormSchema, decoded: &Map<String, Value>) -> Option<(String, String)> {
    for field in &schema.fields {
        let Some(value) = decoded.get(&field.name) else {
            if field.required
                && !matches!(
                    field.kind,
                    FieldKind::Boolean
                        | FieldKind::StringArray { .. }
                        | FieldKind::EnumArray { .. }
                )
            {
                return Some((
                    field.name.clone(),
                    format!("required field `{}` decoded to nothing", field.name),
                ));
            }
            continue;
        };
        let fits = match &field.kind {
            FieldKind::String { .. } => value.is_string(),
            FieldKind::Enum { options } => value
                .as_str()
                .is_some_and(|text| options.iter().any(|option| option == text)),
            FieldKind::Number { .. } => value.is_number(),
            FieldKind::Integer { .. } => value.is_i64() || value.is_u64(),
            FieldKind::Boolean => value.is_boolean(),
            FieldKind::StringArray { .. } => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            FieldKind::EnumArray { options, .. } => value.as_array().is_some_and(|items| {
                items.iter().all(|item| {
                    item.as_str()
                        .is_some_and(|text| options.iter().any(|option| option == text))
                })
            }),
            FieldKind::Object { .. } => value.is_object(),
            FieldKind::RecordList { .. } => value.is_array(),
        };
        if !fits {
            return Some((
                field.name.clone(),
                format!(
                    "`{}` decoded to {value}, which is not {}",
                    field.name,
                    describe_kind(&field.kind)
                ),
            ));
        }
    }
    None
}

fn quality_warnings(tree: &PageTree, fields: &[PlacedField]) -> Vec<FormIssue> {
    let mut warnings = Vec::new();
    for placed in fields {
        if placed.label.trim().is_empty() {
            warnings.push(issue(
                Some(&placed.node),
                Some(&placed.name),
                "field_without_label",
                format!("field `{}` has no visible label", placed.name),
                "give it a short label a person understands".into(),
            ));
        }
    }
    let mut previous_level = 0_u64;
    for id in tree.document_order() {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        match node.component.as_str() {
            "Heading" => {
                let level = node.props.get("level").and_then(Value::as_u64).unwrap_or(2);
                if level > previous_level + 1 {
                    warnings.push(issue(
                        Some(id),
                        None,
                        "heading_order",
                        format!("heading `{id}` is level {level} after level {previous_level}"),
                        format!("use level {} here (start the page at level 1 and go down one at a time)", previous_level + 1),
                    ));
                }
                previous_level = level;
            }
            "Button" => {
                let label = node
                    .props
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_lowercase();
                let variant = node
                    .props
                    .get("variant")
                    .and_then(Value::as_str)
                    .unwrap_or("primary");
                if destroys(&label) && variant != "danger" {
                    warnings.push(issue(Some(id), None, "destructive_not_danger", format!("button `{id}` (\"{label}\") destroys something but is styled {variant}"), "set `variant: \"danger\"`".into()));
                }
            }
            _ => {}
        }
    }
    warnings
}

fn field_names(schema: &FormSchema) -> String {
    schema
        .fields
        .iter()
        .map(|field| format!("`{}`", field.name))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_kind(kind: &FieldKind) -> String {
    match kind {
        FieldKind::String { .. } => "a string".into(),
        FieldKind::Number { .. } => "a number".into(),
        FieldKind::Integer { .. } => "an integer".into(),
        FieldKind::Boolean => "a boolean".into(),
        FieldKind::Enum { options } => format!("one of {}", options.join(", ")),
        FieldKind::StringArray { .. } => "a list of strings".into(),
        FieldKind::EnumArray { options, .. } => {
            format!("a list of values from {}", options.join(", "))
        }
        FieldKind::Object { .. } => "a group of fields".into(),
        FieldKind::RecordList { .. } => "a list of records".into(),
    }
}

fn suggest_component(field: &FormField) -> String {
    match &field.kind {
        FieldKind::String { .. } => "an Input (type text, email, url or date) or a TextArea".into(),
        FieldKind::Number { .. } => "an Input with type \"number\"".into(),
        FieldKind::Integer { .. } => "an Input with type \"number\" and step 1".into(),
        FieldKind::Boolean => "a Checkbox".into(),
        FieldKind::Enum { options } if options.len() <= 5 => "a RadioGroup".into(),
        FieldKind::Enum { .. } => "a Select".into(),
        FieldKind::StringArray { .. } => "a MultiTextInput, or a Table with selectable rows".into(),
        FieldKind::EnumArray { .. } => "a CheckboxGroup or a Select with multiple: true".into(),
        FieldKind::Object { .. } => "a Fieldset holding one control per member".into(),
        FieldKind::RecordList { .. } => {
            "a RecordList (an editable table or a stack of fieldsets)".into()
        }
    }
}

/// Whether a button labelled `label` destroys something (deletes, removes, wipes…), so it must
/// look dangerous.
#[must_use]
pub fn destroys(label: &str) -> bool {
    let label = label.to_lowercase();
    [
        "delete", "remove", "discard", "destroy", "purge", "erase", "wipe",
    ]
    .iter()
    .any(|verb| label.contains(verb))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{FormField, StringFormat};

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn schema() -> FormSchema {
        FormSchema::new(vec![
            FormField::new("archive_ids", FieldKind::string_array()),
            FormField::new("note", FieldKind::string()).optional(),
            FormField::new("priority", FieldKind::enumeration(["low", "high"])),
        ])
    }

    fn tree(nodes: Value) -> Result<PageTree, serde_json::Error> {
        let mut wrapped = serde_json::Map::new();
        wrapped.insert("nodes".to_owned(), nodes);
        serde_json::from_value(Value::Object(wrapped))
    }

    fn good_nodes() -> Value {
        json!({
            "h": {"component": "Heading", "props": {"text": "Archive emails", "level": 1}},
            "f": {"component": "Form", "props": {}, "children": ["ids", "note", "prio", "go"]},
            "ids": {"component": "CheckboxGroup", "props": {"name": "archive_ids", "label": "Emails", "options": [{"value": "m1", "label": "One"}, {"value": "m2", "label": "Two"}]}},
            "note": {"component": "TextArea", "props": {"name": "note", "label": "Note"}},
            "prio": {"component": "RadioGroup", "props": {"name": "priority", "label": "Priority", "required": true, "options": [{"value": "low", "label": "Low"}, {"value": "high", "label": "High"}]}},
            "go": {"component": "Button", "props": {"label": "Archive", "kind": "submit"}}
        })
    }

    fn rules(report: &FormReport) -> Vec<&'static str> {
        report.errors.iter().map(|issue| issue.rule).collect()
    }

    fn check(nodes: Value) -> Result<FormReport, serde_json::Error> {
        Ok(validate_form(
            &tree(nodes)?,
            &Catalog::defaults(),
            Some(&schema()),
            &json!({}),
        ))
    }

    fn structured_schema() -> Result<FormSchema, crate::SchemaError> {
        FormSchema::from_json_schema(&json!({"type": "object", "properties": {
            "address": {"type": "object", "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"}
            }, "required": ["street", "city"]},
            "line_items": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
                "sku": {"type": "string"},
                "quantity": {"type": "integer", "minimum": 1},
                "unit": {"type": "string", "enum": ["piece", "box"]}
            }, "required": ["sku", "quantity"]}}
        }, "required": ["address", "line_items"]}))
    }

    fn structured_nodes() -> Value {
        json!({
            "h": {"component": "Heading", "props": {"text": "Correct the invoice", "level": 1}},
            "f": {"component": "Form", "props": {}, "children": ["addr", "items", "go"]},
            "addr": {"component": "Fieldset", "props": {"name": "address", "legend": "Address"}, "children": ["street", "city"]},
            "street": {"component": "Input", "props": {"name": "address.street", "label": "Street", "required": true}},
            "city": {"component": "Input", "props": {"name": "address.city", "label": "City", "required": true}},
            "items": {"component": "RecordList", "props": {
                "name": "line_items", "label": "Line items", "rows": {"$data": "/items"}, "key": "sku", "min_items": 1,
                "columns": [
                    {"field": "sku", "read_only": true, "required": true},
                    {"field": "quantity", "input": "number", "min": 1, "step": 1, "required": true},
                    {"field": "unit", "input": "select", "options": ["piece", "box"]}
                ]}},
            "go": {"component": "Button", "props": {"label": "Send", "kind": "submit"}}
        })
    }

    fn check_structured(nodes: Value) -> Result<FormReport, Box<dyn std::error::Error>> {
        Ok(validate_form(
            &tree(nodes)?,
            &Catalog::defaults(),
            Some(&structured_schema()?),
            &json!({"items": [{"sku": "A-1", "quantity": 2}]}),
        ))
    }

    #[test]
    fn fieldset_children_and_record_list_columns_cover_every_path() -> TestResult {
        let report = check_structured(structured_nodes())?;
        assert!(report.ok, "{:#?}", report.errors);
        Ok(())
    }

    #[test]
    fn a_member_or_a_record_field_without_its_control_is_named_by_path() -> TestResult {
        let mut nodes = structured_nodes();
        nodes["addr"]["children"] = json!(["street"]);
        if let Some(object) = nodes.as_object_mut() {
            object.remove("city");
        }
        if let Some(columns) = nodes["items"]["props"]["columns"].as_array_mut() {
            columns.retain(|column| column["field"] != "quantity");
        }
        let report = check_structured(nodes)?;
        let found: Vec<(&str, Option<&str>, &str)> = report
            .errors
            .iter()
            .map(|issue| (issue.rule, issue.field.as_deref(), issue.fix.as_str()))
            .collect();
        assert!(found.contains(&(
            "missing_field",
            Some("address.city"),
            "place an Input (type text, email, url or date) or a TextArea named `address.city` inside the Form (in a Fieldset named `address`)"
        )), "{found:#?}");
        assert!(found.contains(&(
            "missing_record_field",
            Some("line_items[].quantity"),
            "add {\"field\": \"quantity\"} to the columns (with \"read_only\": true to show it unchanged)"
        )), "{found:#?}");
        Ok(())
    }

    #[test]
    fn a_column_for_no_record_field_or_a_read_only_required_column_without_rows_is_an_error(
    ) -> TestResult {
        let mut nodes = structured_nodes();
        if let Some(props) = nodes["items"]["props"].as_object_mut() {
            props.remove("rows");
            props.remove("key");
        }
        if let Some(columns) = nodes["items"]["props"]["columns"].as_array_mut() {
            columns.push(json!({"field": "colour"}));
        }
        let report = check_structured(nodes)?;
        let rules: Vec<(&str, Option<&str>)> = report
            .errors
            .iter()
            .map(|issue| (issue.rule, issue.field.as_deref()))
            .collect();
        assert_eq!(
            rules,
            [
                ("read_only_without_rows", Some("line_items[].sku")),
                ("unknown_record_field", Some("line_items"))
            ]
        );
        Ok(())
    }

    #[test]
    fn a_form_with_every_field_right_is_ok() -> TestResult {
        let report = check(good_nodes())?;
        assert!(report.ok, "{:#?}", report.errors);
        Ok(())
    }

    #[test]
    fn a_schema_field_without_a_component_is_missing() -> TestResult {
        let mut nodes = good_nodes();
        nodes["f"]["children"] = json!(["ids", "prio", "go"]);
        if let Some(object) = nodes.as_object_mut() {
            object.remove("note");
        }
        let report = check(nodes)?;
        assert_eq!(rules(&report), vec!["missing_field"]);
        assert_eq!(report.errors[0].field.as_deref(), Some("note"));
        assert!(
            report.errors[0].fix.contains("TextArea"),
            "{}",
            report.errors[0].fix
        );
        Ok(())
    }

    #[test]
    fn a_field_name_outside_the_schema_is_unknown() -> TestResult {
        let mut nodes = good_nodes();
        nodes["note"]["props"]["name"] = json!("comment");
        let report = check(nodes)?;
        assert!(
            rules(&report).contains(&"unknown_field"),
            "{:?}",
            rules(&report)
        );
        assert!(rules(&report).contains(&"missing_field"));
        Ok(())
    }

    #[test]
    fn a_checkbox_for_a_string_is_a_type_mismatch() -> TestResult {
        let mut nodes = good_nodes();
        nodes["note"] =
            json!({"component": "Checkbox", "props": {"name": "note", "label": "Note"}});
        let report = check(nodes)?;
        assert_eq!(rules(&report), vec!["type_mismatch"]);
        assert_eq!(report.errors[0].node.as_deref(), Some("note"));
        Ok(())
    }

    #[test]
    fn free_text_for_an_enum_is_refused() -> TestResult {
        let mut nodes = good_nodes();
        nodes["prio"] = json!({"component": "Input", "props": {"name": "priority", "label": "Priority", "required": true}});
        assert_eq!(rules(&check(nodes)?), vec!["free_input_for_enum"]);
        Ok(())
    }

    #[test]
    fn an_option_outside_the_enum_is_reported() -> TestResult {
        let mut nodes = good_nodes();
        nodes["prio"]["props"]["options"] =
            json!([{"value": "low", "label": "Low"}, {"value": "urgent", "label": "Urgent"}]);
        let report = check(nodes)?;
        // "high" is now offered nowhere, so a valid answer cannot be given either.
        assert_eq!(
            rules(&report),
            vec!["option_outside_enum", "option_missing"]
        );
        assert!(report.errors[0].message.contains("urgent"));
        assert!(report.errors[1].message.contains("high"));
        Ok(())
    }

    #[test]
    fn a_required_field_that_can_be_left_empty_is_reported() -> TestResult {
        let mut nodes = good_nodes();
        nodes["prio"]["props"]["required"] = json!(false);
        assert_eq!(rules(&check(nodes)?), vec!["required_can_be_empty"]);
        Ok(())
    }

    #[test]
    fn a_field_outside_the_form_is_reported() -> TestResult {
        let mut nodes = good_nodes();
        nodes["f"]["children"] = json!(["ids", "prio", "go"]);
        let report = check(nodes)?;
        assert_eq!(rules(&report), vec!["field_outside_form"]);
        Ok(())
    }

    #[test]
    fn a_form_without_a_submit_button_is_reported() -> TestResult {
        let mut nodes = good_nodes();
        nodes["go"]["props"]["kind"] = json!("cancel");
        assert_eq!(rules(&check(nodes)?), vec!["no_submit_button"]);
        Ok(())
    }

    #[test]
    fn a_decline_button_is_always_allowed_and_is_not_a_submit_button() -> TestResult {
        // Decline is always available (code adds it where a page places none), takes no field
        // and answers nothing of the schema: it never makes a page unanswerable.
        let mut nodes = good_nodes();
        nodes["f"]["children"] = json!(["ids", "note", "prio", "go", "no"]);
        nodes["no"] =
            json!({"component": "Button", "props": {"label": "Decline", "kind": "decline"}});
        let report = check(nodes.clone())?;
        assert!(report.ok, "{:?}", report.errors);
        nodes["go"]["props"]["kind"] = json!("decline");
        assert_eq!(rules(&check(nodes)?), vec!["no_submit_button"]);
        Ok(())
    }

    #[test]
    fn a_page_without_a_form_is_reported_for_a_schema() -> TestResult {
        let report =
            check(json!({"h": {"component": "Heading", "props": {"text": "Hi", "level": 1}}}))?;
        assert!(rules(&report).contains(&"no_form"));
        assert_eq!(
            rules(&report)
                .iter()
                .filter(|rule| **rule == "missing_field")
                .count(),
            3
        );
        Ok(())
    }

    #[test]
    fn broken_children_and_duplicate_names_come_from_the_tree_check() -> TestResult {
        let mut nodes = good_nodes();
        nodes["f"]["children"] = json!(["ids", "note", "prio", "go", "ghost"]);
        nodes["dup"] =
            json!({"component": "TextArea", "props": {"name": "note", "label": "Again"}});
        if let Some(children) = nodes["f"]["children"].as_array_mut() {
            children.push(json!("dup"));
        }
        let report = check(nodes)?;
        assert!(
            rules(&report).contains(&"missing_child"),
            "{:?}",
            rules(&report)
        );
        assert!(
            rules(&report).contains(&"duplicate_field_name"),
            "{:?}",
            rules(&report)
        );
        Ok(())
    }

    #[test]
    fn an_empty_display_page_is_not_ok_and_a_display_page_is() -> TestResult {
        let empty = validate_form(&PageTree::default(), &Catalog::defaults(), None, &json!({}));
        assert_eq!(rules(&empty), vec!["empty_page"]);
        let display = validate_form(
            &tree(json!({"h": {"component": "Heading", "props": {"text": "Stats", "level": 1}}}))?,
            &Catalog::defaults(),
            None,
            &json!({}),
        );
        assert!(display.ok);
        Ok(())
    }

    #[test]
    fn quality_warnings_cover_headings_and_destructive_buttons() -> TestResult {
        let mut nodes = good_nodes();
        nodes["h"]["props"]["level"] = json!(3);
        nodes["go"]["props"]["label"] = json!("Delete 3 emails");
        let report = check(nodes)?;
        assert!(report.ok, "warnings do not block");
        let mut warned: Vec<&str> = report.warnings.iter().map(|issue| issue.rule).collect();
        warned.sort_unstable();
        assert_eq!(warned, vec!["destructive_not_danger", "heading_order"]);
        Ok(())
    }

    /// The report for one field `node` placed for `field`, with a Form and a submit button.
    #[expect(
        clippy::needless_pass_by_value,
        reason = "the callers build the node inline"
    )]
    fn one_field(field: FormField, node: Value) -> Result<FormReport, serde_json::Error> {
        let nodes = json!({
            "f": {"component": "Form", "props": {}, "children": ["x", "go"]},
            "x": node,
            "go": {"component": "Button", "props": {"label": "Save"}}
        });
        Ok(validate_form(
            &tree(nodes)?,
            &Catalog::defaults(),
            Some(&FormSchema::new(vec![field])),
            &json!({}),
        ))
    }

    #[test]
    fn a_required_checkbox_for_a_yes_no_answer_can_never_send_false() -> TestResult {
        let field = FormField::new("billable", FieldKind::Boolean);
        let report = one_field(
            field.clone(),
            json!({"component": "Checkbox", "props": {"name": "billable", "label": "Billable", "required": true}}),
        )?;
        assert_eq!(rules(&report), vec!["required_checkbox"]);
        assert!(
            report.errors[0].fix.contains("remove `required`"),
            "{}",
            report.errors[0].fix
        );
        let fixed = one_field(
            field,
            json!({"component": "Checkbox", "props": {"name": "billable", "label": "Billable"}}),
        )?;
        assert!(fixed.ok, "{:#?}", fixed.errors);
        Ok(())
    }

    #[test]
    fn a_number_input_without_a_fractional_step_cannot_take_cents() -> TestResult {
        let field = FormField::new("amount", FieldKind::number());
        for step in [None, Some(json!(1)), Some(json!(0.01))] {
            let mut props =
                json!({"name": "amount", "label": "Amount", "type": "number", "required": true});
            if let Some(step) = step {
                props["step"] = step;
            }
            let report = one_field(field.clone(), json!({"component": "Input", "props": props}))?;
            assert_eq!(rules(&report), vec!["number_step"], "{props}");
            assert_eq!(report.errors[0].fix, "set `step: \"any\"`");
        }
        let half_hours = FormField::new(
            "hours",
            FieldKind::Number {
                minimum: None,
                maximum: None,
                exclusive_minimum: None,
                exclusive_maximum: None,
                multiple_of: Some(0.5),
            },
        );
        let whole = json!({"component": "Input", "props": {"name": "hours", "label": "Hours", "type": "number", "step": 1, "required": true}});
        assert_eq!(
            rules(&one_field(half_hours.clone(), whole)?),
            vec!["number_step"]
        );
        let half = json!({"component": "Input", "props": {"name": "hours", "label": "Hours", "type": "number", "step": 0.5, "required": true}});
        assert!(one_field(half_hours.clone(), half)?.ok);
        let off_grid = json!({"component": "Input", "props": {"name": "hours", "label": "Hours", "type": "number", "step": 0.5, "min": 0.2, "required": true}});
        let report = one_field(half_hours, off_grid)?;
        assert!(
            rules(&report).contains(&"number_step"),
            "{:?}",
            rules(&report)
        );
        Ok(())
    }

    #[test]
    fn component_constraints_narrower_than_the_schema_are_reported() -> TestResult {
        let age = FormField::new(
            "age",
            FieldKind::Integer {
                minimum: Some(0),
                maximum: Some(130),
                multiple_of: None,
            },
        );
        let narrower = json!({"component": "Input", "props": {"name": "age", "label": "Age", "type": "number", "min": 18, "max": 99, "required": true}});
        let report = one_field(age.clone(), narrower)?;
        assert_eq!(rules(&report), vec!["control_bounds", "control_bounds"]);
        assert_eq!(report.errors[0].fix, "set `min` to 0");
        let same = json!({"component": "Input", "props": {"name": "age", "label": "Age", "type": "number", "min": 0, "max": 130, "required": true}});
        assert!(one_field(age, same)?.ok);

        let code = FormField::new(
            "code",
            FieldKind::String {
                format: None,
                min_length: None,
                max_length: Some(10),
                pattern: Some("[0-9]".into()),
            },
        );
        let report = one_field(
            code.clone(),
            json!({"component": "Input", "props": {"name": "code", "label": "Code", "required": true, "maxLength": 5, "minLength": 2, "pattern": "[0-9]"}}),
        )?;
        let mut found = rules(&report);
        found.sort_unstable();
        assert_eq!(
            found,
            vec![
                "control_max_length",
                "control_min_length",
                "control_pattern"
            ]
        );
        let plain = json!({"component": "Input", "props": {"name": "code", "label": "Code", "required": true}});
        assert!(one_field(code, plain)?.ok);
        Ok(())
    }

    #[test]
    fn fewer_options_or_rows_than_min_items_cannot_be_answered() -> TestResult {
        let colours = FormField::new(
            "colours",
            FieldKind::EnumArray {
                options: vec!["red".into(), "green".into(), "blue".into()],
                min_items: Some(3),
                max_items: None,
                unique_items: true,
            },
        );
        let two = json!({"component": "CheckboxGroup", "props": {"name": "colours", "label": "Colours", "required": true, "options": ["red", "green"]}});
        let report = one_field(colours, two)?;
        assert!(
            rules(&report).contains(&"too_few_options"),
            "{:?}",
            rules(&report)
        );
        assert!(
            rules(&report).contains(&"option_missing"),
            "{:?}",
            rules(&report)
        );

        let ids = FormField::new(
            "claim_ids",
            FieldKind::StringArray {
                min_items: Some(3),
                max_items: None,
                unique_items: true,
                item_min_length: None,
                item_max_length: None,
                item_pattern: None,
                item_format: None,
            },
        );
        let nodes = json!({
            "f": {"component": "Form", "props": {}, "children": ["t", "go"]},
            "t": {"component": "Table", "props": {"rows": {"$data": "/claims"}, "selectable": {"name": "claim_ids", "idKey": "id", "label": "Claims", "required": true}}},
            "go": {"component": "Button", "props": {"label": "Approve"}}
        });
        let report = validate_form(
            &tree(nodes)?,
            &Catalog::defaults(),
            Some(&FormSchema::new(vec![ids.clone()])),
            &json!({"claims": [{"id": "c1"}, {"id": "c2"}]}),
        );
        assert_eq!(rules(&report), vec!["too_few_options"]);
        let rows = json!({"component": "MultiTextInput", "props": {"name": "claim_ids", "label": "Claims", "required": true, "maxRows": 2}});
        assert_eq!(rules(&one_field(ids, rows)?), vec!["too_few_rows"]);
        Ok(())
    }

    #[test]
    fn an_email_or_date_as_plain_text_is_reported_with_the_type_to_use() -> TestResult {
        for (format, wanted) in [(StringFormat::Email, "email"), (StringFormat::Date, "date")] {
            let field = FormField::new(
                "when",
                FieldKind::String {
                    format: Some(format),
                    min_length: None,
                    max_length: None,
                    pattern: None,
                },
            );
            let text = json!({"component": "Input", "props": {"name": "when", "label": "When", "required": true}});
            let report = one_field(field.clone(), text)?;
            assert_eq!(rules(&report), vec!["input_type"]);
            assert_eq!(
                report.errors[0].fix,
                format!("use an Input with `type: \"{wanted}\"`")
            );
            let area = json!({"component": "TextArea", "props": {"name": "when", "label": "When", "required": true}});
            assert_eq!(rules(&one_field(field.clone(), area)?), vec!["input_type"]);
            let typed = json!({"component": "Input", "props": {"name": "when", "label": "When", "required": true, "type": wanted}});
            assert!(one_field(field, typed)?.ok);
        }
        let plain = FormField::new("name", FieldKind::string());
        let email = json!({"component": "Input", "props": {"name": "name", "label": "Name", "required": true, "type": "email"}});
        assert_eq!(rules(&one_field(plain, email)?), vec!["input_type"]);
        Ok(())
    }

    #[test]
    fn a_required_control_for_an_optional_field_is_reported() -> TestResult {
        let field = FormField::new("note", FieldKind::string()).optional();
        let report = one_field(
            field,
            json!({"component": "TextArea", "props": {"name": "note", "label": "Note", "required": true}}),
        )?;
        assert_eq!(rules(&report), vec!["required_but_optional"]);
        Ok(())
    }

    #[test]
    fn an_integer_field_fed_by_a_fractional_number_input_is_a_mismatch() -> TestResult {
        let schema = FormSchema::new(vec![FormField::new(
            "count",
            FieldKind::Integer {
                multiple_of: None,
                minimum: None,
                maximum: None,
            },
        )]);
        let nodes = json!({
            "f": {"component": "Form", "props": {}, "children": ["n", "go"]},
            "n": {"component": "Input", "props": {"name": "count", "label": "Count", "type": "number", "step": 0.5, "required": true}},
            "go": {"component": "Button", "props": {"label": "Save"}}
        });
        let report = validate_form(
            &tree(nodes)?,
            &Catalog::defaults(),
            Some(&schema),
            &json!({}),
        );
        assert_eq!(rules(&report), vec!["type_mismatch"]);
        Ok(())
    }
}
