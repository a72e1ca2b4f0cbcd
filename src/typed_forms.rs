//! Typed forms: a workflow's answer as a Rust type, with `#[derive(FormSchema)]` and
//! `#[derive(FormEnum)]` (see `tessera::forms::typed` for the accepted types and the `#[form(…)]`
//! rules). The examples live here, in the crate whose name the derive's generated paths use.
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
