//! The Form as a whole against the schema: a Form exists when the schema asks for an answer,
//! every control submits a schema path from inside it, every path has a control, and it has a
//! submit Button. Each control is then checked against its field (`controls.rs`, `records.rs`).

use std::collections::BTreeSet;

use serde_json::Value;
use tessera_app::{
    catalog::Catalog,
    tree::{BoundData, PageTree, PlacedField},
};

use super::{
    controls::{check_answerable, check_field_type},
    issue,
    records::check_record_columns,
    wording::{describe_kind, field_names, suggest_component},
    FormIssue,
};
use crate::{FieldKind, FormField, FormSchema};

/// Every error of the page's controls against `schema`, pushed onto `errors`.
pub(super) fn check_against_schema(
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
    check_every_path_placed(schema, fields, errors);
    check_submit_button(tree, &forms, errors);
}

/// A `missing_field` error for each schema path no control submits.
fn check_every_path_placed(
    schema: &FormSchema,
    fields: &[PlacedField],
    errors: &mut Vec<FormIssue>,
) {
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
}

/// A `no_submit_button` error when there are `forms` and none holds a submit Button.
fn check_submit_button(tree: &PageTree, forms: &[&str], errors: &mut Vec<FormIssue>) {
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
pub(super) fn control_field<'s>(schema: &'s FormSchema, name: &str) -> Option<&'s FormField> {
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
