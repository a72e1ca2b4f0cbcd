//! Response schemas and form submissions: what a page asks for, and turning what a browser sends
//! into a typed, validated JSON value.
//!
//! A response schema is a flat object (DESIGN.md §5), described by [`FormSchema`]: loaded from
//! JSON Schema with a load-time check ([`FormSchema::from_json_schema`]) or derived from a Rust
//! type with a compile-time check (`#[derive(FormSchema)]`, [`FormSchemaType`]). A submission is
//! decoded mechanically by the field types ([`decode()`]), never by guessing from the values, and
//! then validated in full ([`validate()`]); [`decode_and_validate`] is the one call a page's POST
//! handler makes. Every failure is a [`FieldErrors`] entry keyed by the field, with one message
//! for a person, so the page can be shown again with the person's values ([`raw_values`]) and a
//! message beside each wrong field.
//!
//! This module knows nothing of pages, HTTP or storage: it maps bytes and JSON to JSON.
//! Errors: [`SchemaError`] for schemas outside the subset (the workflow author's fault),
//! [`FieldErrors`] for submissions (the person's).

pub mod decode;
pub mod schema;
pub mod typed;
pub mod validate;

use std::{collections::BTreeMap, fmt};

use serde::Serialize;

pub use decode::{decode, decode_values, is_reserved, pairs, raw_values};
pub use schema::{humanize, FieldKind, FormField, FormSchema, SchemaError, StringFormat};
pub use tessera_macros::{FormEnum, FormSchema};
pub use typed::{FormEnum, FormFieldType, FormScalar, FormSchemaType};
pub use validate::{decode_and_validate, validate, validate_field};

/// What was wrong with a submission: one message for a person per field name.
///
/// The key is the field's name as submitted; the message names the field by its label (for
/// example `"Email must be an email address, like name@example.com"`), so it reads the same
/// beside the field and in a JSON error. Serializes as a JSON object `{field: message}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct FieldErrors(pub BTreeMap<String, String>);

impl FieldErrors {
    /// No errors yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `message` for `field` unless the field already has one: the first problem found is
    /// the one a person fixes first.
    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.entry(field.into()).or_insert_with(|| message.into());
    }

    /// The message for `field`, if it has one.
    #[must_use]
    pub fn get(&self, field: &str) -> Option<&str> {
        self.0.get(field).map(String::as_str)
    }

    /// Whether `field` has a message.
    #[must_use]
    pub fn contains(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }

    /// Whether there are no errors at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many fields have an error.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Every `(field, message)`, ordered by field name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .map(|(field, message)| (field.as_str(), message.as_str()))
    }

    /// `Ok(value)` when there are no errors, else `Err(self)`.
    ///
    /// # Errors
    /// Returns `self` when it holds at least one error.
    pub fn into_result<T>(self, value: T) -> Result<T, Self> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for FieldErrors {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (field, message)) in self.iter().enumerate() {
            if index > 0 {
                formatter.write_str("; ")?;
            }
            write!(formatter, "field \"{field}\": {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldErrors {}
