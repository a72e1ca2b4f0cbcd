//! Typed forms (`tessera::forms::typed`) with the derives, which write `::tessera::forms` paths
//! and so are tested from a crate that depends on `tessera`.

use serde::Deserialize;
use serde_json::json;

use tessera::forms::typed::*;
use tessera::forms::{
    decode_and_validate, FieldErrors, FieldKind, FormEnum, FormField, FormSchema, StringFormat,
};

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
    let errors = decode_typed::<Onboarding>(b"_count.contacts=1&contacts[0].name=Ada&office.city=")
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
