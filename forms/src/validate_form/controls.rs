//! One control against the schema field it submits: the value it yields is the field's type,
//! its options are the enum's, it cannot be left empty when the field is required, and the
//! answerability rules (`answerable::check`) hold on its props as rendered.

use tessera_app::{
    catalog::{Catalog, FieldYield},
    tree::{BoundData, PageTree, PlacedField},
};

use super::{
    issue,
    wording::{describe_kind, suggest_component},
    FormIssue,
};
use crate::{answerable, FieldKind, FormField};

/// The answerability rules (`forms::answerable::check`) on the node's props as rendered.
pub(super) fn check_answerable(
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
pub(super) fn check_field_type(
    placed: &PlacedField,
    field: &FormField,
    errors: &mut Vec<FormIssue>,
) -> bool {
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
    check_options(placed, field, errors);
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

/// A closed field's control offers options, and only the enum's.
fn check_options(placed: &PlacedField, field: &FormField, errors: &mut Vec<FormIssue>) {
    let Some(allowed) = field.kind.options() else {
        return;
    };
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
