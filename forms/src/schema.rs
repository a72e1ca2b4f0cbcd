//! The form-compatible subset of JSON Schema: what a page can ask a person for.
//!
//! A response schema is an object whose fields are strings, numbers, integers, booleans, string
//! enums, optional versions of those, arrays of strings or of a string enum, objects of such
//! fields (a fieldset, nested up to [`MAX_NESTING`] deep), and arrays of objects (a list of
//! records, whose fields are any of the above except another list of records) (DESIGN.md §5).
//! Anything a browser form cannot express mechanically (a list of records inside a record, arrays
//! of numbers or of arrays, choices between shapes, schemas for unknown keys, names holding `.`,
//! `[` or `]`, which controls use for paths) is rejected when the schema is loaded, with a
//! [`SchemaError`] that names the field by its path (`order.parcels[].weight`) and says what to do
//! instead, so a workflow author finds out when the workflow is defined, never when a person
//! submits.
//!
//! [`FormSchema::from_json_schema`] accepts what `schemars` emits for Rust types (nested structs
//! and `Vec` of structs behind `$ref` into `$defs`, `Option<T>` as
//! `type: [T, "null"]` or `anyOf [.., null]`, enums behind `$ref` into `$defs`/`definitions`,
//! documented enum variants as `oneOf` of `const`s, metadata wrapped in a one-element `allOf`);
//! [`FormSchema::to_json_schema`] gives one canonical JSON Schema (draft 2020-12) back, and the two
//! round-trip. This module only describes shapes: decoding is `forms::decode`, checking values is
//! `forms::validate`.

mod emit;
mod keywords;
mod load;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use keywords::{
    bounds, check_options, integer_kind, is_null_schema, number_kind, single_type,
    string_constants, string_keyword, string_kind, string_options,
};
use load::{Loader, Scope};

/// How deep `$ref`/`allOf` wrappers may nest before the schema is taken to be cyclic.
const MAX_REFERENCE_DEPTH: usize = 16;

/// How many objects and lists of records may enclose a field: `a.b.c.d.leaf` is as deep as a
/// form goes. Deeper structure is refused when the schema loads, which also bounds the work of
/// decoding a submission's paths.
pub const MAX_NESTING: usize = 4;

/// JSON Schema keywords whose meaning a form cannot honour; a field (or the root) using one is
/// rejected rather than silently ignored.
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
];

/// The `format`s schemars and other generators put on numbers: implied by the type, so ignored.
const NUMERIC_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "uint", "int",
    "float", "double",
];

/// A response schema in the form-compatible subset: an ordered list of flat fields.
///
/// It serializes as (and deserializes from) its canonical JSON Schema, so storing a `FormSchema`
/// stores plain JSON Schema and loading it re-checks the subset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Value")]
pub struct FormSchema {
    /// The fields, in order: as declared for a derived schema, in the JSON object's iteration
    /// order for a loaded one (by name, unless `serde_json`'s `preserve_order` feature is on).
    pub fields: Vec<FormField>,
}

/// One field of a form: a name the browser sends, how to label it, and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct FormField {
    /// The key in the submitted body and in the response object.
    pub name: String,
    /// A label for people; [`humanize`] of the name when absent.
    pub title: Option<String>,
    /// Help text shown beside the field.
    pub description: Option<String>,
    /// The value the control starts with (JSON Schema `default`); checked against the field
    /// when the schema loads.
    pub default: Option<Value>,
    /// Example answers (JSON Schema `examples`); the first is the control's placeholder.
    pub examples: Vec<Value>,
    /// Whether a submission must give a value. Booleans and arrays always decode to a value
    /// (`false`, `[]`), so for them this only affects the emitted JSON Schema.
    pub required: bool,
    /// What the field holds and the rules it must satisfy.
    pub kind: FieldKind,
}

/// What a field holds, with the JSON Schema rules the subset supports for it.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    /// Text.
    String {
        /// A checked format (email, url, uri, date, date-time).
        format: Option<StringFormat>,
        /// Fewest characters (Unicode scalar values), as JSON Schema `minLength`.
        min_length: Option<u64>,
        /// Most characters, as JSON Schema `maxLength`.
        max_length: Option<u64>,
        /// A regular expression the text must contain a match of (JSON Schema search semantics;
        /// anchor it with `^…$` to match the whole text).
        pattern: Option<String>,
    },
    /// A finite decimal number.
    Number {
        /// Smallest allowed value (inclusive).
        minimum: Option<f64>,
        /// Largest allowed value (inclusive).
        maximum: Option<f64>,
        /// Values must be greater than this.
        exclusive_minimum: Option<f64>,
        /// Values must be less than this.
        exclusive_maximum: Option<f64>,
        /// Values must be a whole multiple of this (JSON Schema `multipleOf`, an HTML `step`).
        multiple_of: Option<f64>,
    },
    /// A whole number. Exclusive bounds in a loaded schema become inclusive ones.
    Integer {
        /// Smallest allowed value (inclusive).
        minimum: Option<i64>,
        /// Largest allowed value (inclusive).
        maximum: Option<i64>,
        /// Values must be a whole multiple of this (JSON Schema `multipleOf`, an HTML `step`).
        multiple_of: Option<u64>,
    },
    /// A yes/no answer (a checkbox): unchecked decodes to `false`, never to "absent".
    Boolean,
    /// One string out of a fixed, non-empty list.
    Enum {
        /// The allowed values, in order; never empty, never `""`, no duplicates.
        options: Vec<String>,
    },
    /// A list of texts (several inputs of one name, a multi-text input, selected table rows).
    StringArray {
        /// Fewest items.
        min_items: Option<u64>,
        /// Most items.
        max_items: Option<u64>,
        /// Whether items must differ from each other.
        unique_items: bool,
        /// Fewest characters per item.
        item_min_length: Option<u64>,
        /// Most characters per item.
        item_max_length: Option<u64>,
        /// A pattern every item must contain a match of.
        item_pattern: Option<String>,
        /// A format every item must have.
        item_format: Option<StringFormat>,
    },
    /// A list of choices out of a fixed list (checkbox group, multiple select).
    EnumArray {
        /// The allowed values; never empty, never `""`, no duplicates.
        options: Vec<String>,
        /// Fewest items.
        min_items: Option<u64>,
        /// Most items.
        max_items: Option<u64>,
        /// Whether items must differ from each other.
        unique_items: bool,
    },
    /// A group of named fields (JSON Schema `type: object` with `properties`), shown as a
    /// fieldset whose controls are named by path (`address.city`). An optional object whose every
    /// control is left empty decodes as absent.
    Object {
        /// The members, in order; each may itself be an object, to [`MAX_NESTING`] levels.
        fields: Vec<FormField>,
    },
    /// A list of records (JSON Schema `type: array` of `type: object`), shown as an editable table
    /// or a stack of fieldsets whose controls are named `line_items[2].quantity`. A record's
    /// fields may be any flat kind, an object, or a string/enum array, never another list of
    /// records.
    RecordList {
        /// The fields of each record, in order.
        fields: Vec<FormField>,
        /// Fewest records.
        min_items: Option<u64>,
        /// Most records.
        max_items: Option<u64>,
    },
}

impl FieldKind {
    /// A plain string with no rules.
    #[must_use]
    pub fn string() -> Self {
        Self::String {
            format: None,
            min_length: None,
            max_length: None,
            pattern: None,
        }
    }

    /// A string of `format` (an email, a date…) with no other rules.
    #[must_use]
    pub fn formatted(format: StringFormat) -> Self {
        Self::String {
            format: Some(format),
            min_length: None,
            max_length: None,
            pattern: None,
        }
    }

    /// A number with no bounds.
    #[must_use]
    pub fn number() -> Self {
        Self::Number {
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            multiple_of: None,
        }
    }

    /// An integer with no bounds.
    #[must_use]
    pub fn integer() -> Self {
        Self::Integer {
            minimum: None,
            maximum: None,
            multiple_of: None,
        }
    }

    /// A string enum over `options`.
    #[must_use]
    pub fn enumeration<I, S>(options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::Enum {
            options: options.into_iter().map(Into::into).collect(),
        }
    }

    /// A list of strings with no rules.
    #[must_use]
    pub fn string_array() -> Self {
        Self::StringArray {
            min_items: None,
            max_items: None,
            unique_items: false,
            item_min_length: None,
            item_max_length: None,
            item_pattern: None,
            item_format: None,
        }
    }

    /// A list of choices out of `options`.
    #[must_use]
    pub fn enum_array<I, S>(options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::EnumArray {
            options: options.into_iter().map(Into::into).collect(),
            min_items: None,
            max_items: None,
            unique_items: false,
        }
    }

    /// The JSON type this field yields, as JSON Schema names it (`"string"`, `"array"`, …).
    #[must_use]
    pub fn json_type(&self) -> &'static str {
        match self {
            Self::String { .. } | Self::Enum { .. } => "string",
            Self::Number { .. } => "number",
            Self::Integer { .. } => "integer",
            Self::Boolean => "boolean",
            Self::StringArray { .. } | Self::EnumArray { .. } | Self::RecordList { .. } => "array",
            Self::Object { .. } => "object",
        }
    }

    /// The allowed values of an enum or enum array; `None` for free-form kinds.
    #[must_use]
    pub fn options(&self) -> Option<&[String]> {
        match self {
            Self::Enum { options } | Self::EnumArray { options, .. } => Some(options),
            _ => None,
        }
    }

    /// Whether the field yields a flat array (and so reads every value of its key). A list of
    /// records is not one: see [`FieldKind::is_structured`].
    #[must_use]
    pub fn is_array(&self) -> bool {
        matches!(self, Self::StringArray { .. } | Self::EnumArray { .. })
    }

    /// Whether the field groups other fields (an object or a list of records), so its controls
    /// are named by paths below its own name rather than by its name.
    #[must_use]
    pub fn is_structured(&self) -> bool {
        matches!(self, Self::Object { .. } | Self::RecordList { .. })
    }

    /// The member fields of an object, or the fields of each record of a list; empty for flat
    /// kinds.
    #[must_use]
    pub fn members(&self) -> &[FormField] {
        match self {
            Self::Object { fields } | Self::RecordList { fields, .. } => fields,
            _ => &[],
        }
    }
}

/// The string formats a form field can require.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StringFormat {
    /// An email address, as a browser's `type=email` input accepts it.
    Email,
    /// A web address: an absolute `http://` or `https://` URL.
    Url,
    /// Any absolute URI (a scheme and a body).
    Uri,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// An RFC 3339 date and time, `YYYY-MM-DDTHH:MM:SS` with `Z` or an offset.
    DateTime,
}

impl StringFormat {
    /// Every format, in the order error messages list them.
    pub const ALL: [Self; 5] = [
        Self::Email,
        Self::Url,
        Self::Uri,
        Self::Date,
        Self::DateTime,
    ];

    /// The JSON Schema spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Email => "email",
            Self::Url => "url",
            Self::Uri => "uri",
            Self::Date => "date",
            Self::DateTime => "date-time",
        }
    }

    /// Parses the JSON Schema spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|format| format.as_str() == text)
    }
}

impl fmt::Display for StringFormat {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A JSON Schema outside the form subset; names the field (empty for the schema as a whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// The offending property's path (`address.city`, `line_items[].sku`); empty when the
    /// problem is the schema itself.
    pub field: String,
    /// Why it was rejected and what to do instead.
    pub reason: String,
}

impl SchemaError {
    fn field(field: &str, reason: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            reason: reason.into(),
        }
    }

    fn root(reason: impl Into<String>) -> Self {
        Self {
            field: String::new(),
            reason: reason.into(),
        }
    }
}

impl std::error::Error for SchemaError {}

impl fmt::Display for SchemaError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(formatter, "response schema: {}", self.reason)
        } else {
            write!(formatter, "field \"{}\": {}", self.field, self.reason)
        }
    }
}

impl FormField {
    /// A required field without title or description.
    #[must_use]
    pub fn new(name: impl Into<String>, kind: FieldKind) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            default: None,
            examples: Vec::new(),
            required: true,
            kind,
        }
    }

    /// The same field, optional.
    #[must_use]
    pub fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// The same field with a title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same field with a description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same field with a default value.
    #[must_use]
    pub fn with_default(mut self, default: Value) -> Self {
        self.default = Some(default);
        self
    }

    /// The label people see: the title, else the humanized name.
    #[must_use]
    pub fn label(&self) -> String {
        match &self.title {
            Some(title) if !title.trim().is_empty() => title.clone(),
            _ => humanize(&self.name),
        }
    }
}
impl FormSchema {
    /// A schema with these fields.
    #[must_use]
    pub fn new(fields: Vec<FormField>) -> Self {
        Self { fields }
    }

    /// The field called `name`.
    #[must_use]
    pub fn field(&self, name: &str) -> Option<&FormField> {
        self.fields.iter().find(|field| field.name == name)
    }

    /// The field at a schema path without indices: `address.city`, `line_items` or
    /// `line_items.quantity` (a record field, named through its list).
    #[must_use]
    pub fn field_at(&self, path: &str) -> Option<&FormField> {
        let mut names = path.split('.');
        let first = self.field(names.next()?)?;
        names.try_fold(first, |field, name| {
            field
                .kind
                .members()
                .iter()
                .find(|member| member.name == name)
        })
    }

    /// Loads a JSON Schema, accepting only the form-compatible subset.
    ///
    /// # Errors
    /// Returns a [`SchemaError`] naming the first offending field (or the schema itself) and why:
    /// a root that is not `type: object`, a nested object, an array of anything but strings or a
    /// string enum, a choice between shapes, an `additionalProperties` schema, an unresolvable
    /// `$ref`, an invalid `pattern`, contradictory bounds, a reserved (`_…`) name, and so on.
    pub fn from_json_schema(schema: &Value) -> Result<Self, SchemaError> {
        let root = schema.as_object().ok_or_else(|| {
            SchemaError::root("must be a JSON object with \"type\": \"object\" and \"properties\"")
        })?;
        match root.get("type") {
            Some(Value::String(kind)) if kind == "object" => {}
            Some(Value::String(kind)) => {
                return Err(SchemaError::root(format!(
                    "must be an object with fields (\"type\": \"object\"), not {kind}; wrap the value in a field"
                )))
            }
            Some(_) => return Err(SchemaError::root("\"type\" must be \"object\"")),
            None => return Err(SchemaError::root("needs \"type\": \"object\"")),
        }
        for keyword in ["oneOf", "anyOf", "allOf", "$ref"] {
            if root.contains_key(keyword) {
                return Err(SchemaError::root(format!(
                    "`{keyword}` is not allowed at the top of a form schema; a form is one flat object with fixed fields"
                )));
            }
        }
        if let Some(keyword) = UNSUPPORTED_KEYWORDS
            .iter()
            .chain(&["multipleOf"])
            .find(|keyword| root.contains_key(**keyword))
        {
            return Err(SchemaError::root(format!(
                "`{keyword}` is not supported in a form schema; a form has a fixed set of named fields"
            )));
        }
        let loader = Loader { root };
        let fields = loader.members("", root, Scope::default())?;
        Ok(Self { fields })
    }
}

impl TryFrom<Value> for FormSchema {
    type Error = SchemaError;

    fn try_from(schema: Value) -> Result<Self, Self::Error> {
        Self::from_json_schema(&schema)
    }
}

/// Turns a label-less field name into one people can read: `archive_ids` → `Archive ids`,
/// `dueDate` → `Due date`.
#[must_use]
pub fn humanize(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous_lowercase = false;
    for character in name.chars() {
        if character == '_' || character == '-' || character.is_whitespace() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lowercase = false;
            continue;
        }
        if character.is_uppercase() && previous_lowercase && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lowercase = character.is_lowercase() || character.is_ascii_digit();
        current.extend(character.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    let joined = words.join(" ");
    let mut characters = joined.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn load(schema: &Value) -> Result<FormSchema, SchemaError> {
        FormSchema::from_json_schema(schema)
    }

    fn rejection(schema: &Value) -> String {
        match load(schema) {
            Ok(loaded) => format!("unexpectedly accepted: {loaded:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn what_schemars_emits_for_a_digest_form_loads() -> Result<(), SchemaError> {
        // The shape schemars 1.x gives `struct DigestForm { archive_ids: Vec<String>,
        // note: Option<String>, urgency: Option<Urgency>, folders: Vec<Folder>, count: u32 }`.
        let schema = load(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "DigestForm",
            "type": "object",
            "properties": {
                "archive_ids": { "description": "Emails to archive.", "type": "array", "items": { "type": "string" } },
                "note": { "type": ["string", "null"] },
                "urgency": { "anyOf": [{ "$ref": "#/$defs/Urgency" }, { "type": "null" }] },
                "folders": { "type": "array", "items": { "$ref": "#/$defs/Folder" } },
                "count": { "type": "integer", "format": "uint32", "minimum": 0 }
            },
            "required": ["archive_ids", "folders", "count"],
            "$defs": {
                "Urgency": { "type": "string", "enum": ["low", "high"] },
                "Folder": { "oneOf": [
                    { "description": "The inbox.", "type": "string", "const": "inbox" },
                    { "description": "Kept forever.", "type": "string", "const": "archive" }
                ] }
            }
        }))?;
        // In the order the properties are written: the form shows them that way.
        let expected = FormSchema::new(vec![
            FormField::new("archive_ids", FieldKind::string_array())
                .with_description("Emails to archive."),
            FormField::new("note", FieldKind::string()).optional(),
            FormField::new("urgency", FieldKind::enumeration(["low", "high"])).optional(),
            FormField::new("folders", FieldKind::enum_array(["inbox", "archive"])),
            FormField::new(
                "count",
                FieldKind::Integer {
                    multiple_of: None,
                    minimum: Some(0),
                    maximum: None,
                },
            ),
        ]);
        assert_eq!(schema, expected);
        Ok(())
    }

    mod real_schemars {
        use std::collections::HashMap;

        use schemars::{schema_for, JsonSchema};

        use super::*;

        /// Where an email goes.
        #[derive(JsonSchema)]
        #[serde(rename_all = "snake_case")]
        #[expect(dead_code, reason = "only its schema is used")]
        enum Folder {
            /// The inbox.
            Inbox,
            /// Kept forever.
            LongTermArchive,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        enum Plain {
            Yes,
            No,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct DigestForm {
            /// Emails to archive.
            archive_ids: Vec<String>,
            note: Option<String>,
            folder: Option<Folder>,
            folders: Vec<Folder>,
            plain: Plain,
            count: u32,
            price: f64,
            agree: bool,
            when: Option<i64>,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct Address {
            street: String,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct WithAddress {
            address: Address,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct LineItem {
            sku: String,
            quantity: u32,
            unit_price: f64,
            billing: Option<Address>,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct Correction {
            line_items: Vec<LineItem>,
            delivery: Option<Address>,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct Nested {
            lines: Vec<Correction>,
        }

        #[test]
        fn nested_structs_and_lists_of_structs_derived_by_schemars_load() -> Result<(), SchemaError>
        {
            let schema = FormSchema::from_json_schema(schema_for!(Correction).as_value())?;
            let address = FieldKind::Object {
                fields: vec![FormField::new("street", FieldKind::string())],
            };
            let Some(FieldKind::RecordList { fields, .. }) =
                schema.field("line_items").map(|field| &field.kind)
            else {
                return Err(SchemaError::root(format!("no list of records: {schema:?}")));
            };
            let names: Vec<(&str, bool)> = fields
                .iter()
                .map(|field| (field.name.as_str(), field.required))
                .collect();
            assert_eq!(
                names,
                [
                    ("sku", true),
                    ("quantity", true),
                    ("unit_price", true),
                    ("billing", false)
                ]
            );
            assert_eq!(fields.get(3).map(|field| &field.kind), Some(&address));
            let delivery = schema.field("delivery");
            assert_eq!(
                delivery.map(|field| (field.required, &field.kind)),
                Some((false, &address))
            );
            assert_eq!(load(&schema.to_json_schema())?, schema);
            Ok(())
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct WithScores {
            scores: Vec<i64>,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct WithMap {
            labels: HashMap<String, String>,
        }

        #[derive(JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct WithOptionalList {
            tags: Option<Vec<String>>,
        }

        #[test]
        fn a_flat_struct_derived_by_schemars_loads() -> Result<(), SchemaError> {
            let schema = FormSchema::from_json_schema(schema_for!(DigestForm).as_value())?;
            let kinds: Vec<(&str, bool, &FieldKind)> = schema
                .fields
                .iter()
                .map(|field| (field.name.as_str(), field.required, &field.kind))
                .collect();
            let folders = FieldKind::enumeration(["inbox", "long_term_archive"]);
            assert_eq!(
                kinds,
                // Declaration order: the form lists the fields as the struct does.
                vec![
                    ("archive_ids", true, &FieldKind::string_array()),
                    ("note", false, &FieldKind::string()),
                    ("folder", false, &folders),
                    (
                        "folders",
                        true,
                        &FieldKind::enum_array(["inbox", "long_term_archive"])
                    ),
                    ("plain", true, &FieldKind::enumeration(["Yes", "No"])),
                    (
                        "count",
                        true,
                        &FieldKind::Integer {
                            multiple_of: None,
                            minimum: Some(0),
                            maximum: None
                        }
                    ),
                    ("price", true, &FieldKind::number()),
                    ("agree", true, &FieldKind::Boolean),
                    ("when", false, &FieldKind::integer()),
                ]
            );
            assert_eq!(
                schema
                    .field("archive_ids")
                    .and_then(|field| field.description.as_deref()),
                Some("Emails to archive.")
            );
            Ok(())
        }

        #[test]
        fn shapes_schemars_derives_for_non_form_types_are_rejected() {
            let error = |schema: schemars::Schema| {
                FormSchema::from_json_schema(schema.as_value())
                    .err()
                    .map(|error| error.to_string())
            };
            assert_eq!(
                error(schema_for!(Nested)).as_deref(),
                Some("field \"lines[].line_items\": a list of records inside a record is not allowed in a form schema; make it a separate list keyed by the outer record, or a list of strings")
            );
            assert_eq!(
                error(schema_for!(WithScores)).as_deref(),
                Some("field \"scores\": arrays of integer are not allowed in a form schema; use an array of strings or of a string enum and convert in the workflow")
            );
            assert_eq!(
                error(schema_for!(WithMap)).as_deref(),
                Some("field \"labels\": additionalProperties must be true or false, not a schema; a form has a fixed set of named fields")
            );
            assert_eq!(
                error(schema_for!(WithOptionalList)).as_deref(),
                Some("field \"tags\": an array field cannot also be null: a form with nothing chosen sends an empty list; drop \"null\"")
            );
        }
    }

    #[test]
    fn what_schemars_0_8_emits_with_definitions_and_all_of_loads() -> Result<(), SchemaError> {
        let schema = load(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "required": ["colour"],
            "properties": {
                "colour": { "description": "Pick one.", "allOf": [{ "$ref": "#/definitions/Colour" }] },
                "shade": { "anyOf": [{ "$ref": "#/definitions/Colour" }, { "type": "null" }] },
                "price": { "type": ["number", "null"], "format": "double" }
            },
            "definitions": { "Colour": { "type": "string", "enum": ["red", "green"] } }
        }))?;
        assert_eq!(
            schema.fields,
            vec![
                FormField::new("colour", FieldKind::enumeration(["red", "green"]))
                    .with_description("Pick one."),
                FormField::new("shade", FieldKind::enumeration(["red", "green"])).optional(),
                FormField::new("price", FieldKind::number()).optional(),
            ]
        );
        Ok(())
    }

    #[test]
    fn an_enum_with_null_among_its_values_is_optional() -> Result<(), SchemaError> {
        let schema = load(&json!({
            "type": "object",
            "properties": { "size": { "type": ["string", "null"], "enum": ["s", "m", null] } },
            "required": ["size"]
        }))?;
        assert_eq!(
            schema.fields,
            vec![FormField::new("size", FieldKind::enumeration(["s", "m"])).optional()]
        );
        Ok(())
    }

    #[test]
    fn string_rules_titles_and_array_rules_are_kept() -> Result<(), SchemaError> {
        let schema = load(&json!({
            "type": "object",
            "properties": {
                "email": { "type": "string", "title": "Your email", "format": "email", "maxLength": 200 },
                "code": { "type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3 },
                "tags": { "type": "array", "items": { "type": "string", "maxLength": 20 }, "minItems": 1, "maxItems": 5, "uniqueItems": true }
            },
            "required": ["email", "code", "tags"]
        }))?;
        assert_eq!(
            schema
                .field("email")
                .map(|field| (field.label(), field.kind.clone())),
            Some((
                "Your email".to_owned(),
                FieldKind::String {
                    format: Some(StringFormat::Email),
                    min_length: None,
                    max_length: Some(200),
                    pattern: None
                }
            ))
        );
        assert_eq!(
            schema.field("tags").map(|field| field.kind.clone()),
            Some(FieldKind::StringArray {
                min_items: Some(1),
                max_items: Some(5),
                unique_items: true,
                item_min_length: None,
                item_max_length: Some(20),
                item_pattern: None,
                item_format: None,
            })
        );
        Ok(())
    }

    #[test]
    fn exclusive_integer_bounds_become_inclusive_ones() -> Result<(), SchemaError> {
        let schema = load(&json!({
            "type": "object",
            "properties": { "rating": { "type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 5.5 } }
        }))?;
        assert_eq!(
            schema.fields[0].kind,
            FieldKind::Integer {
                multiple_of: None,
                minimum: Some(1),
                maximum: Some(5)
            }
        );
        Ok(())
    }

    #[test]
    fn an_object_without_properties_is_a_form_with_no_fields() -> Result<(), SchemaError> {
        assert_eq!(load(&json!({ "type": "object" }))?, FormSchema::default());
        Ok(())
    }

    #[test]
    fn objects_nest_as_fieldsets_and_round_trip() -> Result<(), SchemaError> {
        let schema = load(&json!({
            "type": "object",
            "properties": {
                "order": {
                    "type": "object",
                    "title": "Order",
                    "properties": {
                        "shipping": {
                            "type": "object",
                            "description": "Where it goes.",
                            "properties": {
                                "address": {
                                    "type": "object",
                                    "properties": {
                                        "city": { "type": "string", "minLength": 1 },
                                        "postal_code": { "type": "string", "pattern": "^[0-9]{5}$" }
                                    },
                                    "required": ["city"]
                                }
                            },
                            "required": ["address"]
                        }
                    },
                    "required": ["shipping"]
                }
            },
            "required": ["order"]
        }))?;
        let city = FormField::new(
            "city",
            FieldKind::String {
                format: None,
                min_length: Some(1),
                max_length: None,
                pattern: None,
            },
        );
        let postal_code = FormField::new(
            "postal_code",
            FieldKind::String {
                format: None,
                min_length: None,
                max_length: None,
                pattern: Some("^[0-9]{5}$".into()),
            },
        )
        .optional();
        let address = FormField::new(
            "address",
            FieldKind::Object {
                fields: vec![city, postal_code],
            },
        );
        let shipping = FormField::new(
            "shipping",
            FieldKind::Object {
                fields: vec![address],
            },
        )
        .with_description("Where it goes.");
        let expected = FormSchema::new(vec![FormField::new(
            "order",
            FieldKind::Object {
                fields: vec![shipping],
            },
        )
        .with_title("Order")]);
        assert_eq!(schema, expected);
        assert_eq!(load(&schema.to_json_schema())?, schema);
        Ok(())
    }

    #[test]
    fn an_optional_reference_to_an_object_is_an_optional_fieldset() -> Result<(), SchemaError> {
        let schema = load(&json!({
            "type": "object",
            "properties": { "address": { "anyOf": [{ "$ref": "#/$defs/Address" }, { "type": "null" }] } },
            "$defs": { "Address": { "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] } }
        }))?;
        let expected = FormField::new(
            "address",
            FieldKind::Object {
                fields: vec![FormField::new("city", FieldKind::string())],
            },
        )
        .optional();
        assert_eq!(schema.field("address"), Some(&expected));
        assert_eq!(
            schema.to_json_schema()["properties"]["address"]["type"],
            json!(["object", "null"])
        );
        assert_eq!(load(&schema.to_json_schema())?, schema);
        Ok(())
    }

    #[test]
    fn an_array_of_objects_is_a_list_of_records_with_every_flat_keyword() -> Result<(), SchemaError>
    {
        let schema = load(&json!({
            "type": "object",
            "properties": {
                "line_items": {
                    "type": "array",
                    "title": "Line items",
                    "minItems": 1,
                    "maxItems": 50,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": { "type": "string", "title": "SKU", "pattern": "^[A-Z0-9-]+$", "examples": ["AB-1"] },
                            "quantity": { "type": "integer", "minimum": 1, "default": 1, "description": "How many." },
                            "unit_price": { "type": "number", "multipleOf": 0.01, "minimum": 0 },
                            "unit": { "type": "string", "enum": ["piece", "box", null] },
                            "note": { "type": "string", "nullable": true },
                            "delivered_on": { "type": "string", "format": "date" },
                            "tags": { "type": "array", "items": { "type": "string", "enum": ["fragile", "cold"] } }
                        },
                        "required": ["sku", "quantity", "unit_price", "delivered_on"]
                    }
                }
            },
            "required": ["line_items"]
        }))?;
        let Some(FieldKind::RecordList {
            fields,
            min_items,
            max_items,
        }) = schema.field("line_items").map(|field| &field.kind)
        else {
            return Err(SchemaError::root("line_items is not a list of records"));
        };
        assert_eq!((*min_items, *max_items), (Some(1), Some(50)));
        let names: Vec<(&str, bool)> = fields
            .iter()
            .map(|field| (field.name.as_str(), field.required))
            .collect();
        assert_eq!(
            names,
            [
                ("sku", true),
                ("quantity", true),
                ("unit_price", true),
                ("unit", false),
                ("note", false),
                ("delivered_on", true),
                ("tags", false)
            ]
        );
        assert_eq!(fields[0].label(), "SKU");
        assert_eq!(fields[1].default, Some(json!(1)));
        assert_eq!(fields[3].kind, FieldKind::enumeration(["piece", "box"]));
        assert_eq!(load(&schema.to_json_schema())?, schema);
        let out_of_range = rejection(&json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": { "type": "object",
                "properties": { "quantity": { "type": "integer", "minimum": 1, "default": 0 } } } } }
        }));
        assert_eq!(
            out_of_range,
            "field \"items[].quantity\": its \"default\" 0 does not fit the field: Quantity must be at least 1"
        );
        Ok(())
    }

    #[test]
    fn what_stays_outside_the_subset_is_refused_naming_the_field_by_path() {
        let records = |record: Value| {
            rejection(&json!({
                "type": "object",
                "properties": { "order": { "type": "object", "properties": {
                    "parcels": { "type": "array", "items": record }
                } } }
            }))
        };
        assert_eq!(
            records(json!({ "type": "object", "properties": {
                "contents": { "type": "array", "items": { "type": "object", "properties": { "sku": { "type": "string" } } } }
            } })),
            "field \"order.parcels[].contents\": a list of records inside a record is not allowed in a form schema; make it a separate list keyed by the outer record, or a list of strings"
        );
        assert_eq!(
            records(json!({ "type": "object", "properties": {
                "box": { "type": "object", "properties": {
                    "items": { "type": "array", "items": { "type": "object", "properties": { "sku": { "type": "string" } } } }
                } }
            } })),
            "field \"order.parcels[].box.items\": a list of records inside a record is not allowed in a form schema; make it a separate list keyed by the outer record, or a list of strings"
        );
        assert_eq!(
            records(
                json!({ "type": "object", "properties": { "weight": { "type": "number", "format": "kg" } } })
            ),
            "field \"order.parcels[].weight\": format \"kg\" is not supported on a number"
        );
        assert_eq!(
            records(json!({ "type": "object", "properties": { "a.b": { "type": "string" } } })),
            "field \"order.parcels[].a.b\": a field name cannot contain \".\", \"[\" or \"]\": a form names nested fields by paths like address.city and line_items[0].sku; rename the field"
        );
        assert_eq!(
            records(json!({ "type": "object", "properties": { "grid": { "type": "array", "items": { "type": "array", "items": { "type": "string" } } } } })),
            "field \"order.parcels[].grid\": arrays of arrays are not allowed in a form schema; use an array of strings or of a string enum"
        );
        assert_eq!(
            records(json!({ "type": "object", "properties": {} , "additionalProperties": { "type": "string" } })),
            "field \"order.parcels[]\": additionalProperties must be true or false, not a schema; a form has a fixed set of named fields"
        );
        assert_eq!(
            records(json!({ "type": "object" })),
            "field \"order.parcels[]\": an object needs at least one property; a form cannot show an empty group"
        );
        let five_deep = json!({ "type": "object", "properties": { "a": { "type": "object", "properties": {
            "b": { "type": "object", "properties": { "c": { "type": "object", "properties": {
                "d": { "type": "object", "properties": { "e": { "type": "object", "properties": {
                    "leaf": { "type": "string" } } } } } } } } } } } } });
        assert_eq!(
            rejection(&five_deep),
            "field \"a.b.c.d.e\": objects and lists of records nest at most 4 deep in a form schema; flatten the innermost level"
        );
    }

    #[test]
    fn arrays_of_numbers_are_rejected() {
        let error = rejection(&json!({
            "type": "object",
            "properties": { "scores": { "type": "array", "items": { "type": "integer" } } }
        }));
        assert_eq!(
            error,
            "field \"scores\": arrays of integer are not allowed in a form schema; use an array of strings or of a string enum and convert in the workflow"
        );
    }

    #[test]
    fn arrays_of_arrays_are_rejected() {
        let error = rejection(&json!({
            "type": "object",
            "properties": { "grid": { "type": "array", "items": { "type": "array", "items": { "type": "string" } } } }
        }));
        assert_eq!(
            error,
            "field \"grid\": arrays of arrays are not allowed in a form schema; use an array of strings or of a string enum"
        );
    }

    #[test]
    fn a_choice_between_object_shapes_is_rejected() {
        let error = rejection(&json!({
            "type": "object",
            "properties": { "payment": { "oneOf": [
                { "type": "object", "properties": { "iban": { "type": "string" } } },
                { "type": "object", "properties": { "card": { "type": "string" } } }
            ] } }
        }));
        assert_eq!(
            error,
            "field \"payment\": a choice between object shapes (oneOf/anyOf) is not allowed in a form schema; use a string enum plus separate optional fields"
        );
    }

    #[test]
    fn a_choice_between_scalar_types_is_rejected() {
        let error = rejection(&json!({
            "type": "object",
            "properties": { "amount": { "anyOf": [{ "type": "string" }, { "type": "number" }] } }
        }));
        assert_eq!(
            error,
            "field \"amount\": a choice between several types (oneOf/anyOf) is not allowed in a form schema; a field has one type"
        );
        let error = rejection(
            &json!({ "type": "object", "properties": { "amount": { "type": ["string", "number"] } } }),
        );
        assert_eq!(
            error,
            "field \"amount\": a field has one type, not several (string, number); split it into separate fields"
        );
    }

    #[test]
    fn an_additional_properties_schema_is_rejected() {
        let error = rejection(&json!({
            "type": "object",
            "properties": { "name": { "type": "string" } },
            "additionalProperties": { "type": "string" }
        }));
        assert_eq!(
            error,
            "response schema: additionalProperties must be true or false, not a schema; a form has a fixed set of named fields"
        );
    }

    #[test]
    fn a_root_that_is_not_an_object_is_rejected() {
        assert_eq!(
            rejection(&json!({ "type": "array", "items": { "type": "string" } })),
            "response schema: must be an object with fields (\"type\": \"object\"), not array; wrap the value in a field"
        );
        assert_eq!(
            rejection(&json!("string")),
            "response schema: must be a JSON object with \"type\": \"object\" and \"properties\""
        );
        assert_eq!(
            rejection(&json!({ "properties": {} })),
            "response schema: needs \"type\": \"object\""
        );
        assert_eq!(
            rejection(&json!({ "type": "object", "oneOf": [] })),
            "response schema: `oneOf` is not allowed at the top of a form schema; a form is one flat object with fixed fields"
        );
        assert_eq!(
            rejection(&json!({ "type": "object", "patternProperties": { "^x": { "type": "string" } } })),
            "response schema: `patternProperties` is not supported in a form schema; a form has a fixed set of named fields"
        );
    }

    #[test]
    fn reserved_and_empty_names_are_rejected() {
        assert_eq!(
            rejection(&json!({ "type": "object", "properties": { "_csrf": { "type": "string" } } })),
            "field \"_csrf\": names starting with \"_\" are reserved for the framework (like _csrf and _action); rename the field"
        );
        assert_eq!(
            rejection(&json!({ "type": "object", "properties": { "": { "type": "string" } } })),
            "response schema: a field needs a non-empty name"
        );
    }

    #[test]
    fn a_required_name_without_a_property_is_rejected() {
        assert_eq!(
            rejection(&json!({ "type": "object", "properties": {}, "required": ["ghost"] })),
            "field \"ghost\": is listed in \"required\" but has no entry in \"properties\""
        );
    }

    #[test]
    fn enums_must_be_non_empty_distinct_non_blank_strings() {
        let field = |schema: Value| {
            rejection(&json!({ "type": "object", "properties": { "choice": schema } }))
        };
        assert_eq!(
            field(json!({ "enum": [1, 2] })),
            "field \"choice\": enum values must all be strings; found 1"
        );
        assert_eq!(
            field(json!({ "type": "string", "enum": [] })),
            "field \"choice\": an enum needs at least one option"
        );
        assert_eq!(
            field(json!({ "enum": ["", "a"] })),
            "field \"choice\": an enum option cannot be the empty string: a form sends \"\" for \"nothing chosen\""
        );
        assert_eq!(
            field(json!({ "enum": ["a", "a"] })),
            "field \"choice\": enum option \"a\" is listed twice"
        );
        assert_eq!(
            field(json!({ "type": "integer", "enum": [1] })),
            "field \"choice\": enum values must all be strings; found 1"
        );
    }

    #[test]
    fn multiple_of_default_examples_and_nullable_load_and_round_trip() -> Result<(), SchemaError> {
        let schema = load(&json!({
            "type": "object",
            "properties": {
                "hours": {"type": "number", "multipleOf": 0.5, "default": 7.5, "title": "Hours", "examples": [8]},
                "seats": {"type": "integer", "multipleOf": 2},
                "note": {"type": "string", "nullable": true, "description": "Anything else."}
            },
            "required": ["hours", "seats", "note"]
        }))?;
        let hours = schema
            .field("hours")
            .ok_or_else(|| SchemaError::root("no hours"))?;
        assert!(
            matches!(hours.kind, FieldKind::Number { multiple_of: Some(step), .. } if step == 0.5)
        );
        assert_eq!(hours.default, Some(json!(7.5)));
        assert_eq!(hours.examples, vec![json!(8)]);
        assert!(matches!(
            schema.field("seats").map(|field| &field.kind),
            Some(FieldKind::Integer {
                multiple_of: Some(2),
                ..
            })
        ));
        assert_eq!(
            schema.field("note").map(|field| field.required),
            Some(false)
        );
        assert_eq!(load(&schema.to_json_schema())?, schema);
        assert_eq!(
            rejection(&json!({"type": "object", "properties": {"hours": {"type": "number", "multipleOf": 0.5, "default": 7.25}}})),
            "field \"hours\": its \"default\" 7.25 does not fit the field: Hours must be a multiple of 0.5"
        );
        assert_eq!(
            rejection(
                &json!({"type": "object", "properties": {"seats": {"type": "integer", "multipleOf": 0.5}}})
            ),
            "field \"seats\": \"multipleOf\" of an integer must be a whole number of at least 1"
        );
        Ok(())
    }

    #[test]
    fn unsupported_field_shapes_name_the_field_and_the_reason() {
        let field =
            |schema: Value| rejection(&json!({ "type": "object", "properties": { "f": schema } }));
        assert_eq!(
            field(json!({ "type": "string", "format": "uuid" })),
            "field \"f\": format \"uuid\" is not supported; use email, url, uri, date or date-time, or a pattern"
        );
        assert_eq!(
            field(json!({ "type": "string", "pattern": "^(?=a)" })),
            "field \"f\": pattern \"^(?=a)\" is not a supported regular expression: error: look-around, including look-ahead and look-behind, is not supported"
        );
        assert_eq!(
            field(json!({ "type": "string", "minLength": 5, "maxLength": 2 })),
            "field \"f\": minLength (5) is greater than maxLength (2); no value could pass"
        );
        assert_eq!(
            field(json!({ "type": "integer", "minimum": 5, "maximum": 2 })),
            "field \"f\": its minimum (5) is above its maximum (2); no whole number could pass"
        );
        assert_eq!(
            field(json!({ "type": "array", "items": [{ "type": "string" }] })),
            "field \"f\": tuple arrays (\"items\" as a list) are not allowed in a form schema; use separate fields"
        );
        assert_eq!(
            field(json!({ "type": ["array", "null"], "items": { "type": "string" } })),
            "field \"f\": an array field cannot also be null: a form with nothing chosen sends an empty list; drop \"null\""
        );
        assert_eq!(
            field(json!({ "type": "array" })),
            "field \"f\": an array field needs \"items\": {\"type\": \"string\"} or a string enum"
        );
        assert_eq!(
            field(json!({ "type": "string", "multipleOf": 5 })),
            "field \"f\": `multipleOf` applies to numbers only; give the field \"type\": \"number\" or \"integer\""
        );
        assert_eq!(
            field(json!({ "type": "null" })),
            "field \"f\": a field cannot only be null; give it a type"
        );
        assert_eq!(
            field(json!({ "description": "no type" })),
            "field \"f\": has no \"type\"; give it one of string, number, integer, boolean, array or object"
        );
        assert_eq!(
            field(json!({ "allOf": [{ "type": "string" }, { "minLength": 1 }] })),
            "field \"f\": allOf with several schemas is not supported; write the field's rules in one schema"
        );
        assert_eq!(
            field(json!({ "$ref": "#/$defs/Missing" })),
            "field \"f\": $ref \"#/$defs/Missing\" does not point into this schema's $defs or definitions"
        );
        assert_eq!(
            field(json!({ "$ref": "https://example.com/schema.json" })),
            "field \"f\": $ref \"https://example.com/schema.json\" does not point into this schema's $defs or definitions"
        );
        assert_eq!(
            field(json!(true)),
            "field \"f\": a field schema must be an object with a \"type\", not true/false"
        );
    }

    #[test]
    fn a_reference_cycle_is_rejected_rather_than_followed_forever() {
        let error = rejection(&json!({
            "type": "object",
            "properties": { "loop": { "$ref": "#/$defs/A" } },
            "$defs": { "A": { "$ref": "#/$defs/B" }, "B": { "$ref": "#/$defs/A" } }
        }));
        assert_eq!(
            error,
            "field \"loop\": $ref/allOf nest too deeply (is there a cycle?)"
        );
    }

    #[test]
    fn the_canonical_json_schema_loads_back_to_the_same_form() -> Result<(), SchemaError> {
        let schema = FormSchema::new(vec![
            FormField::new(
                "name",
                FieldKind::String {
                    format: None,
                    min_length: Some(1),
                    max_length: Some(80),
                    pattern: Some("^[^0-9]+$".into()),
                },
            )
            .with_title("Full name")
            .with_description("As on your passport."),
            FormField::new("email", FieldKind::formatted(StringFormat::Email)).optional(),
            FormField::new(
                "age",
                FieldKind::Integer {
                    multiple_of: None,
                    minimum: Some(0),
                    maximum: Some(150),
                },
            )
            .optional(),
            FormField::new(
                "price",
                FieldKind::Number {
                    multiple_of: None,
                    minimum: Some(0.5),
                    maximum: None,
                    exclusive_minimum: None,
                    exclusive_maximum: Some(1e6),
                },
            ),
            FormField::new("agree", FieldKind::Boolean),
            FormField::new("newsletter", FieldKind::Boolean).optional(),
            FormField::new("size", FieldKind::enumeration(["s", "m", "l"])).optional(),
            FormField::new("ids", FieldKind::string_array()),
            FormField::new(
                "extras",
                FieldKind::EnumArray {
                    options: vec!["a".into(), "b".into()],
                    min_items: Some(1),
                    max_items: Some(2),
                    unique_items: true,
                },
            )
            .optional(),
        ]);
        let canonical = schema.to_json_schema();
        let reloaded = FormSchema::from_json_schema(&canonical)?;
        let by_name = |form: &FormSchema, name: &str| form.field(name).cloned();
        for field in &schema.fields {
            assert_eq!(
                by_name(&reloaded, &field.name),
                Some(field.clone()),
                "{}",
                field.name
            );
        }
        assert_eq!(
            canonical["properties"]["email"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            canonical["properties"]["size"]["enum"],
            json!(["s", "m", "l", null])
        );
        assert_eq!(
            canonical["required"],
            json!(["name", "price", "agree", "ids"])
        );
        assert_eq!(canonical["additionalProperties"], json!(false));
        Ok(())
    }

    #[test]
    fn a_form_schema_serializes_as_its_json_schema_and_deserializing_rechecks_it(
    ) -> Result<(), serde_json::Error> {
        let schema = FormSchema::new(vec![FormField::new("note", FieldKind::string()).optional()]);
        let text = serde_json::to_string(&schema)?;
        assert_eq!(serde_json::from_str::<FormSchema>(&text)?, schema);
        let nested = r#"{"type":"object","properties":{"a":{"type":"object"}}}"#;
        let error = serde_json::from_str::<FormSchema>(nested)
            .err()
            .map(|error| error.to_string());
        assert!(error.is_some_and(|text| text.contains("field \"a\": an object needs")));
        Ok(())
    }

    #[test]
    fn humanize_turns_field_names_into_labels() {
        assert_eq!(humanize("archive_ids"), "Archive ids");
        assert_eq!(humanize("dueDate"), "Due date");
        assert_eq!(humanize("first-name"), "First name");
        assert_eq!(humanize("email"), "Email");
        assert_eq!(humanize("HTTPStatus"), "Httpstatus");
        assert_eq!(humanize("address2_line"), "Address2 line");
        assert_eq!(humanize("été"), "Été");
        assert_eq!(humanize("__"), "__");
    }

    #[test]
    fn a_label_prefers_the_title() {
        let field = FormField::new("archive_ids", FieldKind::string_array());
        assert_eq!(field.label(), "Archive ids");
        assert_eq!(
            field.with_title("Emails to archive").label(),
            "Emails to archive"
        );
    }
}
