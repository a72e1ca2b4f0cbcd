//! How a schema field is put to a model in an issue: its kind in words, the component that
//! fits it, the schema's field names.

use crate::{FieldKind, FormField, FormSchema};

pub(super) fn field_names(schema: &FormSchema) -> String {
    schema
        .fields
        .iter()
        .map(|field| format!("`{}`", field.name))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn describe_kind(kind: &FieldKind) -> String {
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

pub(super) fn suggest_component(field: &FormField) -> String {
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
