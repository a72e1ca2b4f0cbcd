//! Response types in Rust: the compile-time half of the form-schema check.
//!
//! A workflow's `ui` step is typed by its response (`Prompt<DigestForm>`), and that type must be a
//! form (DESIGN.md §5). `#[derive(FormSchema)]` (from `tessera-macros`, re-exported as
//! `tessera::forms::FormSchema`) implements [`FormSchemaType`] for a struct with named fields, and
//! requires every field's type to implement [`FormFieldType`]. That trait is implemented only for
//! the types a browser form can produce, so anything else fails to compile, pointing at the field:
//!
//! | Rust field type | form field |
//! |---|---|
//! | `String` | string |
//! | `f64`, `f32` | number |
//! | `i64`, `i32`, `i16`, `i8`, `u64`, `u32`, `u16`, `u8` | integer (bounded to the type's range) |
//! | `bool` | boolean (a checkbox) |
//! | an enum with `#[derive(FormEnum)]` (unit variants only) | enum |
//! | `Option<T>` of any of the above | the same, optional |
//! | `Vec<String>` | array of string |
//! | `Vec<E>`, `E` with `#[derive(FormEnum)]` | array of enum |
//! | a struct with `#[derive(FormSchema)]` | object (a fieldset), nested up to 4 deep |
//! | `Option<S>`, `S` with `#[derive(FormSchema)]` | optional object: absent when left empty |
//! | `Vec<S>`, `S` with `#[derive(FormSchema)]` | list of records (an editable table or stack) |
//!
//! A list of records inside a record (`Vec<S>` where `S` holds a `Vec` of structs, directly or in
//! an object) and structs nested deeper than 4 fail to compile too, with a message naming the
//! struct.
//!
//! The derive reads `#[serde(rename = "…")]`, `#[serde(rename_all = "…")]`, `#[serde(skip)]`
//! and `#[serde(default)]` (a defaulted field is optional) so the schema's names are the names
//! serde reads; doc comments become descriptions. `#[form(…)]` adds a title and rules, checked
//! against the field's type at compile time too:
//! `#[form(title = "…", format = "email", min_length = 1, max_length = 200, pattern = "^…$")]`
//! on text, `#[form(minimum = 0, maximum = 10)]` on numbers, `#[form(min_items = 1, max_items = 5)]`
//! on lists.
//!
//! Enum options are the variant names after serde's renaming rules (`rename`, and `rename_all`
//! with serde's spellings such as `"snake_case"`); keep the enum's serde attributes and its
//! `FormEnum` derive on the same type so the two agree.
//!
//! Examples, passing and failing to compile, are on `tessera::typed_forms`: the derive writes
//! `::tessera::forms` paths, which resolve where `tessera` is a dependency.

use serde::de::DeserializeOwned;

use super::{
    decode_and_validate, validate::FORM_ERROR_KEY, FieldErrors, FieldKind, FormSchema, StringFormat,
};

/// Decodes and validates a form body straight into a response type: [`decode_and_validate`]
/// against `T::form_schema()`, then serde.
///
/// # Errors
/// Returns the field messages of [`decode_and_validate`]; if serde still rejects the value (the
/// type's serde attributes disagree with its derived schema), one message under
/// [`FORM_ERROR_KEY`] says so.
pub fn decode_typed<T: FormSchemaType + DeserializeOwned>(body: &[u8]) -> Result<T, FieldErrors> {
    let value = decode_and_validate(&T::form_schema(), body)?;
    serde_json::from_value(value).map_err(|error| {
        let mut errors = FieldErrors::new();
        errors.add(
            FORM_ERROR_KEY,
            format!("The answer does not fit the form's type: {error}"),
        );
        errors
    })
}

/// A Rust type that is a whole form response: a struct, usually `#[derive(FormSchema)]`.
pub trait FormSchemaType {
    /// Whether a field holds a list of records, directly or inside an object.
    const HAS_RECORDS: bool = false;
    /// Whether a list of records sits inside a record somewhere (outside the subset: the derive
    /// then fails to compile).
    const RECORDS_IN_RECORDS: bool = false;
    /// How many objects and lists of records enclose the deepest field (0 for a flat form).
    const DEPTH: usize = 0;

    /// The form schema of this type.
    fn form_schema() -> FormSchema;

    /// The canonical JSON Schema of this type (see [`FormSchema::to_json_schema`]).
    #[must_use]
    fn json_schema() -> serde_json::Value {
        Self::form_schema().to_json_schema()
    }
}

/// A Rust type that can be one field of a form response. Implemented only for the types listed
/// in the module documentation: the compile-time check that a response type is a flat form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of a form response",
    label = "not a form field type",
    note = "each field of a form response is String, f64/f32, an integer, bool, an enum with #[derive(FormEnum)], a struct with #[derive(FormSchema)], Option of one of those, Vec<String>, Vec of a FormEnum enum, or Vec of a FormSchema struct",
    note = "add #[derive(FormSchema)] to a nested struct; send numbers in lists as Vec<String>"
)]
pub trait FormFieldType {
    /// Whether a submission must carry a value (`false` for `Option<T>`).
    const REQUIRED: bool;
    /// Whether the field is or holds a list of records.
    const HAS_RECORDS: bool = false;
    /// Whether the field holds a list of records inside a record.
    const RECORDS_IN_RECORDS: bool = false;
    /// How many objects and lists of records the field is and encloses (0 for a flat field).
    const DEPTH: usize = 0;

    /// The field's kind, with the rules the type itself implies (integer ranges).
    fn field_kind() -> FieldKind;
}

/// A type that can sit inside `Option<T>` in a form response: text, a number, a boolean or a
/// [`FormEnum`].
#[diagnostic::on_unimplemented(
    message = "`Option<{Self}>` cannot be a field of a form response",
    label = "not allowed inside Option in a form",
    note = "Option<T> needs T to be String, f64/f32, an integer, bool, an enum with #[derive(FormEnum)] or a struct with #[derive(FormSchema)]",
    note = "a list field is Vec<…> without Option: nothing chosen already decodes to an empty list"
)]
pub trait FormScalar {
    /// As [`FormFieldType::HAS_RECORDS`], for `Option<Self>`.
    const HAS_RECORDS: bool = false;
    /// As [`FormFieldType::RECORDS_IN_RECORDS`], for `Option<Self>`.
    const RECORDS_IN_RECORDS: bool = false;
    /// As [`FormFieldType::DEPTH`], for `Option<Self>`.
    const DEPTH: usize = 0;

    /// The kind of the field holding this type.
    fn scalar_kind() -> FieldKind;
}

/// A type that can be the item of a `Vec` field: `String` or a [`FormEnum`].
#[diagnostic::on_unimplemented(
    message = "`Vec<{Self}>` cannot be a field of a form response",
    label = "not allowed as a list item in a form",
    note = "a list field is Vec<String>, Vec<E> where E is an enum with #[derive(FormEnum)], or Vec<S> where S is a struct with #[derive(FormSchema)]; send numbers as Vec<String> and convert in the workflow"
)]
pub trait FormListItem {
    /// Whether the item is a record (a struct with `#[derive(FormSchema)]`).
    const IS_RECORD: bool = false;
    /// Whether the record holds a list of records (then `Vec<Self>` is outside the subset).
    const RECORD_HAS_RECORDS: bool = false;
    /// How many objects and lists of records `Vec<Self>` is and encloses.
    const DEPTH: usize = 0;

    /// The kind of a `Vec` field of this item type.
    fn list_kind() -> FieldKind;
}

/// A string enum with unit variants: `#[derive(FormEnum)]` implements this and makes the enum
/// usable as a field, inside `Option` and as a `Vec` item.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a form enum",
    note = "add #[derive(FormEnum)] to a unit-only enum"
)]
pub trait FormEnum {
    /// The values a form may send, in order (variant names after serde renaming).
    const OPTIONS: &'static [&'static str];
}

/// A field type that can carry text rules (`format`, `min_length`, `max_length`, `pattern`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not text, so it cannot have text rules",
    note = "format, min_length, max_length and pattern apply to String and Option<String>"
)]
pub trait FormTextField {}

/// A field type that can carry number bounds (`minimum`, `maximum`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number, so it cannot have minimum or maximum",
    note = "minimum and maximum apply to numbers and Option of numbers"
)]
pub trait FormNumberField {}

/// A field type that can carry item counts (`min_items`, `max_items`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a list, so it cannot have min_items or max_items",
    note = "min_items and max_items apply to Vec<String> and Vec of a FormEnum enum"
)]
pub trait FormListField {}

impl FormTextField for String {}
impl FormTextField for Option<String> {}
impl<T: FormListItem> FormListField for Vec<T> {}
impl<T: FormNumberField + FormScalar> FormNumberField for Option<T> {}

impl FormScalar for String {
    fn scalar_kind() -> FieldKind {
        FieldKind::string()
    }
}

impl FormScalar for bool {
    fn scalar_kind() -> FieldKind {
        FieldKind::Boolean
    }
}

macro_rules! float_fields {
    ($($float:ty),*) => {$(
        impl FormScalar for $float {
            fn scalar_kind() -> FieldKind {
                if <$float>::MAX as f64 == f64::MAX {
                    FieldKind::number()
                } else {
                    FieldKind::Number {
                        minimum: Some(<$float>::MIN as f64),
                        maximum: Some(<$float>::MAX as f64),
                        exclusive_minimum: None,
                        exclusive_maximum: None,
                        multiple_of: None,
                    }
                }
            }
        }
        impl FormNumberField for $float {}
    )*};
}

macro_rules! integer_fields {
    ($($integer:ty),*) => {$(
        impl FormScalar for $integer {
            fn scalar_kind() -> FieldKind {
                let bound = |value: i128| i64::try_from(value).ok().filter(|value| *value != i64::MIN && *value != i64::MAX);
                FieldKind::Integer {
                    minimum: bound(i128::from(<$integer>::MIN)),
                    maximum: bound(i128::from(<$integer>::MAX)),
                    multiple_of: None,
                }
            }
        }
        impl FormNumberField for $integer {}
    )*};
}

float_fields!(f64, f32);
integer_fields!(i64, i32, i16, i8, u64, u32, u16, u8);

macro_rules! scalar_fields {
    ($($scalar:ty),*) => {$(
        impl FormFieldType for $scalar {
            const REQUIRED: bool = true;
            fn field_kind() -> FieldKind {
                <Self as FormScalar>::scalar_kind()
            }
        }
    )*};
}

scalar_fields!(String, bool, f64, f32, i64, i32, i16, i8, u64, u32, u16, u8);

impl<T: FormScalar> FormFieldType for Option<T> {
    const REQUIRED: bool = false;
    const HAS_RECORDS: bool = T::HAS_RECORDS;
    const RECORDS_IN_RECORDS: bool = T::RECORDS_IN_RECORDS;
    const DEPTH: usize = T::DEPTH;
    fn field_kind() -> FieldKind {
        T::scalar_kind()
    }
}

impl FormListItem for String {
    fn list_kind() -> FieldKind {
        FieldKind::string_array()
    }
}

impl<T: FormListItem> FormFieldType for Vec<T> {
    const REQUIRED: bool = true;
    const HAS_RECORDS: bool = T::IS_RECORD;
    const RECORDS_IN_RECORDS: bool = T::RECORD_HAS_RECORDS;
    const DEPTH: usize = T::DEPTH;
    fn field_kind() -> FieldKind {
        T::list_kind()
    }
}

/// The largest of `depths` (0 for none): a struct's depth from its fields', in a `const`.
#[must_use]
pub const fn deepest(depths: &[usize]) -> usize {
    let mut deepest = 0;
    let mut index = 0;
    while index < depths.len() {
        if depths[index] > deepest {
            deepest = depths[index];
        }
        index += 1;
    }
    deepest
}

/// Applies `#[form(format, min_length, max_length, pattern)]` to a text field's kind; the bound
/// makes the derive fail to compile when the field is not text.
#[must_use]
pub fn text_rules<T: FormTextField + ?Sized>(
    kind: FieldKind,
    new_format: Option<StringFormat>,
    new_min_length: Option<u64>,
    new_max_length: Option<u64>,
    new_pattern: Option<&str>,
) -> FieldKind {
    match kind {
        FieldKind::String {
            format,
            min_length,
            max_length,
            pattern,
        } => FieldKind::String {
            format: new_format.or(format),
            min_length: new_min_length.or(min_length),
            max_length: new_max_length.or(max_length),
            pattern: new_pattern.map(str::to_owned).or(pattern),
        },
        other => other,
    }
}

/// Applies `#[form(minimum, maximum)]` to a number field's kind, narrowing (never widening) the
/// range the Rust type already implies; the bound makes the derive fail to compile when the field
/// is not a number.
#[must_use]
pub fn number_rules<T: FormNumberField + ?Sized>(
    kind: FieldKind,
    new_minimum: Option<f64>,
    new_maximum: Option<f64>,
) -> FieldKind {
    match kind {
        FieldKind::Number {
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            multiple_of,
        } => FieldKind::Number {
            minimum: narrow(minimum, new_minimum, f64::max),
            maximum: narrow(maximum, new_maximum, f64::min),
            exclusive_minimum,
            exclusive_maximum,
            multiple_of,
        },
        FieldKind::Integer {
            minimum,
            maximum,
            multiple_of,
        } => FieldKind::Integer {
            multiple_of,
            minimum: narrow(
                minimum,
                new_minimum.map(|value| value.ceil() as i64),
                i64::max,
            ),
            maximum: narrow(
                maximum,
                new_maximum.map(|value| value.floor() as i64),
                i64::min,
            ),
        },
        other => other,
    }
}

/// Applies `#[form(min_items, max_items)]` to a list field's kind; the bound makes the derive fail
/// to compile when the field is not a list.
#[must_use]
pub fn list_rules<T: FormListField + ?Sized>(
    kind: FieldKind,
    new_min_items: Option<u64>,
    new_max_items: Option<u64>,
) -> FieldKind {
    match kind {
        FieldKind::StringArray {
            min_items,
            max_items,
            unique_items,
            item_min_length,
            item_max_length,
            item_pattern,
            item_format,
        } => FieldKind::StringArray {
            min_items: new_min_items.or(min_items),
            max_items: new_max_items.or(max_items),
            unique_items,
            item_min_length,
            item_max_length,
            item_pattern,
            item_format,
        },
        FieldKind::EnumArray {
            options,
            min_items,
            max_items,
            unique_items,
        } => FieldKind::EnumArray {
            options,
            min_items: new_min_items.or(min_items),
            max_items: new_max_items.or(max_items),
            unique_items,
        },
        other => other,
    }
}

fn narrow<T: Copy>(current: Option<T>, new: Option<T>, pick: fn(T, T) -> T) -> Option<T> {
    match (current, new) {
        (Some(current), Some(new)) => Some(pick(current, new)),
        (current, new) => new.or(current),
    }
}
