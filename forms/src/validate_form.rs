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

mod controls;
mod placement;
mod proof;
mod quality;
mod records;
mod wording;

use serde::Serialize;
use serde_json::Value;
use tessera_app::{
    catalog::Catalog,
    tree::{BoundData, PageTree},
};

pub use self::quality::destroys;
use self::{placement::check_against_schema, proof::prove_by_decoding, quality::quality_warnings};
use super::FormSchema;

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{FieldKind, FormField, StringFormat};

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
