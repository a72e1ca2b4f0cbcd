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
//! A form that passes:
//! ```
//! use tessera::forms::{FieldKind, FormEnum, FormSchema, FormSchemaType};
//!
//! #[derive(FormEnum)]
//! #[serde(rename_all = "snake_case")]
//! enum Urgency { Low, RightNow }
//!
//! #[derive(FormSchema)]
//! struct DigestForm {
//!     /// The emails to archive.
//!     archive_ids: Vec<String>,
//!     note: Option<String>,
//!     urgency: Option<Urgency>,
//! }
//!
//! let schema = DigestForm::form_schema();
//! assert_eq!(schema.fields[0].name, "archive_ids");
//! assert_eq!(schema.fields[0].description.as_deref(), Some("The emails to archive."));
//! assert!(!schema.fields[1].required);
//! assert_eq!(schema.fields[2].kind, FieldKind::enumeration(["low", "right_now"]));
//! ```
//!
//! Nested structs, lists of structs and optional structs are forms with structure:
//! ```
//! use tessera::forms::{FieldKind, FormSchema, FormSchemaType};
//!
//! #[derive(FormSchema)]
//! struct Address { street: String, city: String }
//!
//! #[derive(FormSchema)]
//! struct LineItem { sku: String, quantity: u32, tags: Vec<String>, billing: Option<Address> }
//!
//! #[derive(FormSchema)]
//! struct Correction { line_items: Vec<LineItem>, delivery: Option<Address> }
//!
//! let schema = Correction::form_schema();
//! assert!(matches!(&schema.fields[0].kind, FieldKind::RecordList { fields, .. } if fields.len() == 4));
//! assert!(matches!(schema.fields[1].kind, FieldKind::Object { .. }));
//! assert!(!schema.fields[1].required);
//! ```
//!
//! A struct without the derive is rejected:
//! ```compile_fail,E0277
//! use tessera::forms::FormSchema;
//!
//! struct Address { street: String, city: String }
//!
//! #[derive(FormSchema)]
//! struct Signup { name: String, address: Address }
//! ```
//!
//! So is a list of lists of records:
//! ```compile_fail,E0277
//! use tessera::forms::FormSchema;
//!
//! #[derive(FormSchema)]
//! struct Parcel { weight: f64 }
//!
//! #[derive(FormSchema)]
//! struct Shipment { waves: Vec<Vec<Parcel>> }
//! ```
//!
//! And a list of records inside a record inside a list:
//! ```compile_fail,E0080
//! use tessera::forms::FormSchema;
//!
//! #[derive(FormSchema)]
//! struct Item { sku: String }
//!
//! #[derive(FormSchema)]
//! struct Parcel { contents: Vec<Item> }
//!
//! #[derive(FormSchema)]
//! struct Shipment { parcels: Vec<Parcel> }
//! ```
//!
//! And structs nested five deep:
//! ```compile_fail,E0080
//! use tessera::forms::FormSchema;
//!
//! #[derive(FormSchema)] struct E { leaf: String }
//! #[derive(FormSchema)] struct D { e: E }
//! #[derive(FormSchema)] struct C { d: D }
//! #[derive(FormSchema)] struct B { c: C }
//! #[derive(FormSchema)] struct A { b: B }
//! #[derive(FormSchema)] struct Root { a: A }
//! ```
//!
//! So is a list of numbers:
//! ```compile_fail,E0277
//! use tessera::forms::FormSchema;
//!
//! #[derive(FormSchema)]
//! struct Scores { scores: Vec<i64> }
//! ```
//!
//! So is a map:
//! ```compile_fail,E0277
//! use std::collections::HashMap;
//! use tessera::forms::FormSchema;
//!
//! #[derive(FormSchema)]
//! struct Labels { labels: HashMap<String, String> }
//! ```
//!
//! So is an optional list (no values already decode to an empty list):
//! ```compile_fail,E0277
//! use tessera::forms::FormSchema;
//!
//! #[derive(FormSchema)]
//! struct Tags { tags: Option<Vec<String>> }
//! ```
//!
//! And a rule on a field of the wrong type:
//! ```compile_fail,E0277
//! use tessera::forms::FormSchema;
//!
//! #[derive(FormSchema)]
//! struct Age { #[form(max_length = 3)] age: u32 }
//! ```

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

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::forms::{decode_and_validate, FormEnum, FormField, FormSchema};

    #[derive(Debug, PartialEq, Deserialize, FormEnum)]
    #[serde(rename_all = "snake_case")]
    enum Priority {
        Low,
        RightNow,
        #[serde(rename = "whenever")]
        Someday,
    }

    #[derive(Debug, PartialEq, Deserialize, FormEnum)]
    #[serde(rename_all = "SCREAMING-KEBAB-CASE")]
    enum Shout {
        QuiteLoud,
    }

    #[derive(Debug, PartialEq, Deserialize, FormSchema)]
    struct Address {
        #[form(title = "City")]
        city: String,
        postal_code: Option<String>,
    }

    #[derive(Debug, PartialEq, Deserialize, FormSchema)]
    struct Contact {
        name: String,
        languages: Vec<Priority>,
        home: Option<Address>,
    }

    #[derive(Debug, PartialEq, Deserialize, FormSchema)]
    struct Onboarding {
        #[form(min_items = 1)]
        contacts: Vec<Contact>,
        office: Address,
        billing: Option<Address>,
    }

    #[test]
    fn nested_structs_and_lists_of_structs_derive_and_decode_typed() -> Result<(), FieldErrors> {
        let schema = Onboarding::form_schema();
        assert_eq!(
            FormSchema::from_json_schema(&schema.to_json_schema()).ok(),
            Some(schema.clone()),
            "the derived schema is in the subset and round-trips"
        );
        let body = b"_count.contacts=2&contacts[0].name=Ada&contacts[0].languages=low\
            &contacts[0].home.city=&contacts[0].home.postal_code=\
            &contacts[1].name=Grace&contacts[1].home.city=Oslo\
            &office.city=Bergen&billing.city=&billing.postal_code=";
        let answer: Onboarding = decode_typed(body)?;
        assert_eq!(
            answer,
            Onboarding {
                contacts: vec![
                    Contact {
                        name: "Ada".into(),
                        languages: vec![Priority::Low],
                        home: None
                    },
                    Contact {
                        name: "Grace".into(),
                        languages: Vec::new(),
                        home: Some(Address {
                            city: "Oslo".into(),
                            postal_code: None
                        }),
                    },
                ],
                office: Address {
                    city: "Bergen".into(),
                    postal_code: None
                },
                billing: None,
            }
        );
        let errors =
            decode_typed::<Onboarding>(b"_count.contacts=1&contacts[0].name=Ada&office.city=")
                .err()
                .unwrap_or_default();
        assert_eq!(errors.get("office.city"), Some("City is required"));
        Ok(())
    }

    /// The answer a digest page asks for.
    #[derive(Debug, PartialEq, Deserialize, FormSchema)]
    struct DigestForm {
        /// Emails to archive.
        ///
        /// Tick as many as you like.
        archive_ids: Vec<String>,
        note: Option<String>,
    }

    #[derive(Debug, PartialEq, Deserialize, FormSchema)]
    #[serde(rename_all = "camelCase")]
    struct Signup {
        #[form(title = "Email address", format = "email", max_length = 200)]
        contact_email: String,
        #[serde(rename = "years")]
        #[form(minimum = 18, maximum = 130)]
        age: u8,
        #[form(minimum = -1.5)]
        balance: Option<f64>,
        #[form(pattern = "^[A-Z]{2}$")]
        country_code: String,
        priority: Option<Priority>,
        shouts: Vec<Shout>,
        #[form(min_items = 1, max_items = 3)]
        days: Vec<Priority>,
        agree: bool,
        #[serde(default)]
        nickname: String,
        #[serde(skip)]
        internal: u64,
    }

    #[test]
    fn a_derived_schema_uses_field_names_types_and_doc_comments() {
        assert_eq!(
            DigestForm::form_schema(),
            FormSchema::new(vec![
                FormField::new("archive_ids", FieldKind::string_array())
                    .with_description("Emails to archive.\n\nTick as many as you like."),
                FormField::new("note", FieldKind::string()).optional(),
            ])
        );
    }

    #[test]
    fn a_derived_schema_follows_serde_renames_skips_and_defaults() {
        let schema = Signup::form_schema();
        let names: Vec<&str> = schema
            .fields
            .iter()
            .map(|field| field.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "contactEmail",
                "years",
                "balance",
                "countryCode",
                "priority",
                "shouts",
                "days",
                "agree",
                "nickname"
            ]
        );
        assert_eq!(
            schema.field("nickname").map(|field| field.required),
            Some(false)
        );
        assert_eq!(
            schema.field("agree").map(|field| field.required),
            Some(true)
        );
        assert_eq!(
            schema
                .field("contactEmail")
                .map(FormField::label)
                .as_deref(),
            Some("Email address")
        );
    }

    #[test]
    fn form_rules_narrow_the_kind_the_type_implies() {
        let schema = Signup::form_schema();
        let kind = |name: &str| schema.field(name).map(|field| field.kind.clone());
        assert_eq!(
            kind("contactEmail"),
            Some(FieldKind::String {
                format: Some(StringFormat::Email),
                min_length: None,
                max_length: Some(200),
                pattern: None
            })
        );
        assert_eq!(
            kind("years"),
            Some(FieldKind::Integer {
                multiple_of: None,
                minimum: Some(18),
                maximum: Some(130)
            })
        );
        assert_eq!(
            kind("balance"),
            Some(FieldKind::Number {
                multiple_of: None,
                minimum: Some(-1.5),
                maximum: None,
                exclusive_minimum: None,
                exclusive_maximum: None
            })
        );
        assert_eq!(
            kind("countryCode"),
            Some(FieldKind::String {
                format: None,
                min_length: None,
                max_length: None,
                pattern: Some("^[A-Z]{2}$".into())
            })
        );
        assert_eq!(
            kind("days"),
            Some(FieldKind::EnumArray {
                options: vec!["low".into(), "right_now".into(), "whenever".into()],
                min_items: Some(1),
                max_items: Some(3),
                unique_items: false
            })
        );
        assert_eq!(kind("shouts"), Some(FieldKind::enum_array(["QUITE-LOUD"])));
    }

    #[test]
    fn enum_options_follow_serde_rename_rules() {
        assert_eq!(Priority::OPTIONS, ["low", "right_now", "whenever"]);
        assert_eq!(Shout::OPTIONS, ["QUITE-LOUD"]);
    }

    #[test]
    fn integer_types_carry_their_range() {
        assert_eq!(
            u8::scalar_kind(),
            FieldKind::Integer {
                multiple_of: None,
                minimum: Some(0),
                maximum: Some(255)
            }
        );
        assert_eq!(
            i32::scalar_kind(),
            FieldKind::Integer {
                multiple_of: None,
                minimum: Some(i64::from(i32::MIN)),
                maximum: Some(i64::from(i32::MAX))
            }
        );
        assert_eq!(
            u64::scalar_kind(),
            FieldKind::Integer {
                multiple_of: None,
                minimum: Some(0),
                maximum: None
            }
        );
        assert_eq!(i64::scalar_kind(), FieldKind::integer());
        assert_eq!(f64::scalar_kind(), FieldKind::number());
        const { assert!(!<Option<u8> as FormFieldType>::REQUIRED) };
    }

    #[test]
    fn a_submission_decodes_into_the_derived_type() -> Result<(), String> {
        let body = "contactEmail=ada%40example.com&years=36&countryCode=GB&priority=right_now&shouts=QUITE-LOUD&days=low&days=whenever&agree=on&_csrf=x";
        let value = decode_and_validate(&Signup::form_schema(), body.as_bytes())
            .map_err(|errors| errors.to_string())?;
        let signup: Signup = serde_json::from_value(value).map_err(|error| error.to_string())?;
        assert_eq!(
            signup,
            Signup {
                contact_email: "ada@example.com".into(),
                age: 36,
                balance: None,
                country_code: "GB".into(),
                priority: Some(Priority::RightNow),
                shouts: vec![Shout::QuiteLoud],
                days: vec![Priority::Low, Priority::Someday],
                agree: true,
                nickname: String::new(),
                internal: 0,
            }
        );
        Ok(())
    }

    #[test]
    fn decode_typed_goes_from_body_to_the_rust_value() {
        assert_eq!(
            decode_typed::<DigestForm>(b"archive_ids=m1&archive_ids=m2&note=&_csrf=t"),
            Ok(DigestForm {
                archive_ids: vec!["m1".into(), "m2".into()],
                note: None
            })
        );
        let errors = decode_typed::<Signup>(b"years=x").err().unwrap_or_default();
        assert_eq!(
            errors.get("years"),
            Some("Years must be a whole number, like 42")
        );
    }

    #[test]
    fn a_derived_schema_rejects_values_outside_the_rust_type() {
        let errors = decode_and_validate(
            &Signup::form_schema(),
            b"contactEmail=a%40b.c&years=300&countryCode=GB&days=low",
        )
        .err()
        .unwrap_or_default();
        assert_eq!(errors.get("years"), Some("Years must be at most 130"));
    }

    #[test]
    fn the_derived_json_schema_loads_back_as_the_same_form() {
        // JSON objects iterate in key order here (serde_json without `preserve_order`), so compare
        // the fields by name.
        let by_name = |mut schema: FormSchema| {
            schema
                .fields
                .sort_by(|left, right| left.name.cmp(&right.name));
            schema
        };
        let reloaded = FormSchema::from_json_schema(&Signup::json_schema()).map(by_name);
        assert_eq!(reloaded, Ok(by_name(Signup::form_schema())));
        assert_eq!(
            Signup::json_schema()["properties"]["agree"],
            json!({ "type": "boolean" })
        );
    }
}
