//! Answerability: a page's controls must let a person send every answer the schema allows, as a
//! browser sends it (DESIGN.md §5).
//!
//! Two halves. [`schema_props`] derives a field component's props from its schema field (input
//! type, `step`, `min`/`max`, `required`, label, help, placeholder, the pre-filled value), and
//! [`complete_props`] adds those the model did not set, so a page is right by construction where
//! the model said nothing. [`check`] is the part of `ValidateForm` that proves a page's controls
//! forbid no valid value: a browser's own constraint validation (`required`, `step`, `min`/`max`,
//! `pattern`, `maxlength`, the input `type`, the options and rows offered) must accept every value
//! the schema accepts. The other direction (whatever the controls send decodes to a valid value or
//! to a 422 naming the field) is the decoder's, proven by `validate_form`'s sample submissions.

use serde_json::{json, Map, Number, Value};

use super::{validate::is_multiple_of, FieldKind, FormField, StringFormat};

/// Longest help text taken from a schema's `description`.
const HELP_LIMIT: usize = 300;

/// One answerability problem: a stable rule code, what is wrong, and a one-line fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanswerable {
    /// A stable `snake_case` rule code.
    pub rule: &'static str,
    /// What a person could not enter.
    pub message: String,
    /// One line saying what to do.
    pub fix: String,
}

fn problem(rule: &'static str, message: String, fix: impl Into<String>) -> Unanswerable {
    Unanswerable {
        rule,
        message,
        fix: fix.into(),
    }
}

/// The `type` an Input should have for `field`.
#[must_use]
pub fn input_type(field: &FormField) -> &'static str {
    match &field.kind {
        FieldKind::Number { .. } | FieldKind::Integer { .. } => "number",
        FieldKind::String {
            format: Some(format),
            ..
        } => match format {
            StringFormat::Email => "email",
            StringFormat::Url | StringFormat::Uri => "url",
            StringFormat::Date => "date",
            StringFormat::DateTime => "text",
        },
        _ => "text",
    }
}

/// The input types that accept every value of `field` (and none that is refused only by type).
#[must_use]
pub fn allowed_input_types(field: &FormField) -> &'static [&'static str] {
    match &field.kind {
        FieldKind::Number { .. } | FieldKind::Integer { .. } => &["number"],
        FieldKind::String { format, .. } => match format {
            Some(StringFormat::Email) => &["email"],
            Some(StringFormat::Url) => &["url"],
            Some(StringFormat::Date) => &["date"],
            Some(StringFormat::Uri) => &["text", "url"],
            Some(StringFormat::DateTime) => &["text", "textarea"],
            None => &["text", "password", "textarea"],
        },
        _ => &["text", "password", "textarea"],
    }
}

/// The number of decimals `step` is written with (`0.25` → 2), so derived bounds print exactly.
fn decimals(step: f64) -> i32 {
    let text = format!("{step}");
    text.split_once('.').map_or(0, |(_, fraction)| {
        i32::try_from(fraction.len()).unwrap_or(12)
    })
}

/// `value` rounded to `step`'s decimals, as a JSON number.
fn on_grid(value: f64, step: f64) -> Option<Value> {
    let scale = 10_f64.powi(decimals(step));
    Number::from_f64((value * scale).round() / scale).map(Value::Number)
}

/// The smallest and largest values a number field allows, moved onto its `multipleOf` grid (an
/// HTML `step` counts from `min`, so `min` must itself be on the grid).
fn number_bounds(field: &FormField) -> (Option<Value>, Option<Value>) {
    match &field.kind {
        FieldKind::Number {
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            multiple_of,
        } => {
            let low = minimum.or(*exclusive_minimum);
            let high = maximum.or(*exclusive_maximum);
            match multiple_of {
                None => (
                    low.and_then(Number::from_f64).map(Value::Number),
                    high.and_then(Number::from_f64).map(Value::Number),
                ),
                Some(step) => (
                    low.and_then(|low| on_grid((low / step - 1e-9).ceil() * step, *step)),
                    high.and_then(|high| on_grid((high / step + 1e-9).floor() * step, *step)),
                ),
            }
        }
        FieldKind::Integer {
            minimum,
            maximum,
            multiple_of,
        } => {
            let step = multiple_of
                .and_then(|step| i64::try_from(step).ok())
                .unwrap_or(1);
            (
                minimum.map(|low| {
                    json!(
                        low.div_euclid(step) * step
                            + if low.rem_euclid(step) == 0 { 0 } else { step }
                    )
                }),
                maximum.map(|high| json!(high.div_euclid(step) * step)),
            )
        }
        _ => (None, None),
    }
}

/// The `step` a number Input needs: the schema's `multipleOf`, else `"any"` for a decimal and 1
/// for a whole number.
fn number_step(field: &FormField) -> Option<Value> {
    match &field.kind {
        FieldKind::Number {
            multiple_of: Some(step),
            ..
        } => Number::from_f64(*step).map(Value::Number),
        FieldKind::Number { .. } => Some(json!("any")),
        FieldKind::Integer { multiple_of, .. } => Some(json!(multiple_of.unwrap_or(1))),
        _ => None,
    }
}

/// Whether a person must give a value: a required scalar, or a list with `minItems` above 0. A
/// boolean never is: an unticked box is the answer `false`.
#[must_use]
pub fn demands_value(field: &FormField) -> bool {
    match &field.kind {
        FieldKind::Boolean => false,
        FieldKind::StringArray { min_items, .. } | FieldKind::EnumArray { min_items, .. } => {
            min_items.is_some_and(|count| count > 0)
        }
        _ => field.required,
    }
}

/// Text placed literally: a `{{/` would start a data placeholder, so it is broken up.
fn literal(text: &str) -> String {
    text.replace("{{/", "{ {/")
}

/// A default as a prop value; `None` when it would read as a data placeholder.
fn literal_value(value: &Value) -> Option<Value> {
    let binds = |text: &str| text.contains("{{/");
    match value {
        Value::String(text) if binds(text) => None,
        Value::Array(items) if items.iter().any(|item| item.as_str().is_some_and(binds)) => None,
        Value::Null => None,
        other => Some(other.clone()),
    }
}

fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// What a text control (Input or TextArea) takes from a string field: its shortest length and
/// the first example as placeholder. Never `maxLength`: see `control_max_length`.
fn insert_text_hints(
    props: &mut Map<String, Value>,
    field: &FormField,
    placeholder: Option<String>,
) {
    if let FieldKind::String {
        min_length: Some(shortest),
        ..
    } = &field.kind
    {
        props.insert(
            "minLength".into(),
            json!(u32::try_from(*shortest).unwrap_or(u32::MAX)),
        );
    }
    if let Some(placeholder) = placeholder {
        props.insert("placeholder".into(), json!(placeholder));
    }
}

/// The props a `component` placed for `field` gets from the schema. Only keys the component
/// accepts; `name` is not among them.
#[must_use]
pub fn schema_props(component: &str, field: &FormField) -> Map<String, Value> {
    let mut props = Map::new();
    props.insert("label".into(), json!(literal(&field.label())));
    if let Some(help) = field.description.as_deref().map(str::trim) {
        if !help.is_empty() {
            props.insert("help".into(), json!(literal(&clip(help, HELP_LIMIT))));
        }
    }
    let placeholder = field
        .examples
        .first()
        .and_then(text_of)
        .map(|text| literal(&text));
    let default = field.default.as_ref().and_then(literal_value);
    match component {
        "Input" => {
            let kind = input_type(field);
            props.insert("type".into(), json!(kind));
            props.insert("required".into(), json!(demands_value(field)));
            if kind == "number" {
                if let Some(step) = number_step(field) {
                    props.insert("step".into(), step);
                }
                let (low, high) = number_bounds(field);
                if let Some(low) = low {
                    props.insert("min".into(), low);
                }
                if let Some(high) = high {
                    props.insert("max".into(), high);
                }
            }
            insert_text_hints(&mut props, field, placeholder);
            if let Some(default) = default.filter(|value| value.is_string() || value.is_number()) {
                props.insert("value".into(), default);
            }
        }
        "TextArea" => {
            props.insert("required".into(), json!(demands_value(field)));
            insert_text_hints(&mut props, field, placeholder);
            if let Some(default) = default.filter(Value::is_string) {
                props.insert("value".into(), default);
            }
        }
        "Checkbox" => {
            if let Some(Value::Bool(checked)) = default {
                props.insert("checked".into(), json!(checked));
            }
        }
        "Select" | "RadioGroup" => {
            props.insert("required".into(), json!(demands_value(field)));
            if let Some(default) = default.filter(|value| value.is_string() || value.is_array()) {
                props.insert("value".into(), default);
            }
        }
        "CheckboxGroup" | "MultiTextInput" => {
            props.insert("required".into(), json!(demands_value(field)));
            if let Some(items) = default.filter(Value::is_array) {
                props.insert("values".into(), items);
            }
            if component == "MultiTextInput" {
                if let Some(placeholder) = placeholder {
                    props.insert("placeholder".into(), json!(placeholder));
                }
            }
        }
        _ => {}
    }
    props
}

/// Adds to `props` (a component call's props for `field`) every schema-derived prop the model
/// did not set. Number-only props are added only to an Input that is (or becomes) a number.
pub fn complete_props(component: &str, props: &mut Value, field: &FormField) {
    let Some(object) = props.as_object_mut() else {
        return;
    };
    let derived = schema_props(component, field);
    let placed_type = object
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    for (key, value) in derived {
        if object.contains_key(&key) {
            continue;
        }
        let number_only = matches!(key.as_str(), "step" | "min" | "max");
        if component == "Input"
            && number_only
            && placed_type.as_deref().is_some_and(|kind| kind != "number")
        {
            continue;
        }
        object.insert(key, value);
    }
}

fn clip(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let mut clipped: String = text.chars().take(limit.saturating_sub(1)).collect();
    clipped.push('\u{2026}');
    clipped
}

fn number_prop(props: &Value, key: &str) -> Option<f64> {
    match props.get(key)? {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

fn flag(props: &Value, key: &str) -> bool {
    props.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Every way the control `component` (with its resolved `props` and the `options` it offers)
/// would stop a person from sending an answer `field` allows.
#[must_use]
pub fn check(
    component: &str,
    props: &Value,
    options: Option<&[String]>,
    field: &FormField,
) -> Vec<Unanswerable> {
    let mut found = Vec::new();
    let label = &field.name;
    let required = match component {
        "Table" => props
            .get("selectable")
            .is_some_and(|selectable| flag(selectable, "required")),
        _ => flag(props, "required"),
    };
    if component == "Checkbox" && required {
        found.push(problem(
            "required_checkbox",
            format!("`{label}` is a yes/no answer, but a required Checkbox can only be sent ticked, so `false` can never be answered"),
            "remove `required` from the Checkbox: unticked sends false",
        ));
    } else if required && !demands_value(field) && !matches!(field.kind, FieldKind::Boolean) {
        found.push(problem(
            "required_but_optional",
            format!(
                "`{label}` may be left empty, but the {component} makes the browser demand a value"
            ),
            "set `required: false`: the schema lets this field be left empty",
        ));
    }
    if component == "Input" || component == "TextArea" {
        let placed_type = if component == "TextArea" {
            "textarea"
        } else {
            props.get("type").and_then(Value::as_str).unwrap_or("text")
        };
        let allowed = allowed_input_types(field);
        if matches!(field.kind, FieldKind::String { .. }) && !allowed.contains(&placed_type) {
            let wanted = input_type(field);
            found.push(problem(
                "input_type",
                format!(
                    "`{label}` is {}, but a {placed_type} control {}",
                    describe_text(field),
                    if matches!(
                        &field.kind,
                        FieldKind::String {
                            format: Some(_),
                            ..
                        }
                    ) {
                        "lets a person type any text that only the server then refuses"
                    } else {
                        "refuses some of its valid values"
                    }
                ),
                format!("use an Input with `type: \"{wanted}\"`"),
            ));
        }
        check_lengths(props, field, &mut found);
        if let Some(pattern) = props.get("pattern").and_then(Value::as_str) {
            found.push(problem(
                "control_pattern",
                format!("the control's pattern `{pattern}` must match the whole text in the browser's own dialect, so it can refuse values the schema allows"),
                "remove `pattern` from the component: the server checks the schema's pattern and names the field",
            ));
        }
        if placed_type == "number" {
            check_number(props, field, &mut found);
        } else if props.get("min").is_some() || props.get("max").is_some() {
            found.push(problem(
                "control_bounds",
                format!("`{label}` has no bounds in the schema, but the control sets min/max"),
                "remove `min` and `max` from the component",
            ));
        }
    }
    if let Some(offered) = options {
        check_options(component, props, offered, field, &mut found);
    }
    if component == "MultiTextInput" {
        if let FieldKind::StringArray {
            min_items: Some(fewest),
            ..
        } = &field.kind
        {
            let rows = props.get("maxRows").and_then(Value::as_u64).unwrap_or(20);
            if *fewest > rows {
                found.push(problem(
                    "too_few_rows",
                    format!("`{label}` needs at least {fewest} entries but the MultiTextInput allows {rows} rows"),
                    format!("set `maxRows` to at least {fewest}"),
                ));
            }
        }
    }
    found
}

fn describe_text(field: &FormField) -> String {
    match &field.kind {
        FieldKind::String {
            format: Some(format),
            ..
        } => format!("a {format}"),
        _ => "free text".into(),
    }
}

fn check_lengths(props: &Value, field: &FormField, found: &mut Vec<Unanswerable>) {
    let FieldKind::String {
        min_length,
        max_length,
        ..
    } = &field.kind
    else {
        return;
    };
    let label = &field.name;
    if let Some(shortest) = props.get("minLength").and_then(Value::as_u64) {
        if shortest > min_length.unwrap_or(0) {
            found.push(problem(
                "control_min_length",
                format!(
                    "the control demands {shortest} characters but `{label}` allows {}",
                    min_length.unwrap_or(0)
                ),
                match min_length {
                    Some(schema) => format!("set `minLength` to {schema}"),
                    None => "remove `minLength` from the component".into(),
                },
            ));
        }
    }
    if let Some(longest) = props.get("maxLength").and_then(Value::as_u64) {
        // A browser counts UTF-16 units: an emoji is two, so only twice the schema's limit lets
        // every text the schema allows be typed.
        if max_length.is_none_or(|schema| longest < schema.saturating_mul(2)) {
            found.push(problem(
                "control_max_length",
                format!("the control stops typing after {longest} characters (a browser counts an emoji as two), which cuts answers `{label}` allows"),
                "remove `maxLength` from the component: the server checks the schema's maxLength and names the field",
            ));
        }
    }
}

/// The lowest and highest value the schema allows, as numbers (ignoring the grid).
fn schema_range(field: &FormField) -> (Option<f64>, Option<f64>) {
    match &field.kind {
        FieldKind::Number {
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            ..
        } => (
            minimum.or(*exclusive_minimum),
            maximum.or(*exclusive_maximum),
        ),
        FieldKind::Integer {
            minimum, maximum, ..
        } => (
            minimum.map(|low| low as f64),
            maximum.map(|high| high as f64),
        ),
        _ => (None, None),
    }
}

fn check_number(props: &Value, field: &FormField, found: &mut Vec<Unanswerable>) {
    let label = &field.name;
    let grid = match &field.kind {
        FieldKind::Number { multiple_of, .. } => *multiple_of,
        FieldKind::Integer { multiple_of, .. } => Some(multiple_of.map_or(1.0, |step| step as f64)),
        _ => return,
    };
    let (derived_low, derived_high) = number_bounds(field);
    let derived_low = derived_low.as_ref().and_then(Value::as_f64);
    let derived_high = derived_high.as_ref().and_then(Value::as_f64);
    let (schema_low, schema_high) = schema_range(field);
    let control_low = number_prop(props, "min");
    let control_high = number_prop(props, "max");
    let tolerance = |bound: f64| 1e-9 * bound.abs().max(1.0);
    if let Some(low) = control_low {
        let lowest = if grid.is_some() {
            derived_low
        } else {
            schema_low
        };
        if lowest.is_none_or(|lowest| low > lowest + tolerance(lowest)) {
            found.push(problem(
                "control_bounds",
                format!(
                    "the control's min {low} refuses values `{label}` allows (from {})",
                    lowest.map_or("any number".into(), |lowest| lowest.to_string())
                ),
                match lowest {
                    Some(lowest) => format!("set `min` to {lowest}"),
                    None => "remove `min` from the component".into(),
                },
            ));
        }
    }
    if let Some(high) = control_high {
        let highest = if grid.is_some() {
            derived_high
        } else {
            schema_high
        };
        if highest.is_none_or(|highest| high < highest - tolerance(highest)) {
            found.push(problem(
                "control_bounds",
                format!(
                    "the control's max {high} refuses values `{label}` allows (up to {})",
                    highest.map_or("any number".into(), |highest| highest.to_string())
                ),
                match highest {
                    Some(highest) => format!("set `max` to {highest}"),
                    None => "remove `max` from the component".into(),
                },
            ));
        }
    }
    let wanted = number_step(field).map_or_else(|| "\"any\"".into(), |step| step.to_string());
    let step = match props.get("step") {
        Some(Value::String(text)) if text == "any" => return,
        Some(value) => value
            .as_f64()
            .or_else(|| value.as_str().and_then(|text| text.parse().ok())),
        None => Some(1.0),
    };
    let Some(step) = step.filter(|step| *step > 0.0) else {
        return;
    };
    let fits = match grid {
        // Any decimal is valid: only `step: "any"` lets a browser send them all.
        None => false,
        Some(grid) => is_multiple_of(grid, step),
    };
    if !fits {
        found.push(problem(
            "number_step",
            format!(
                "the control's step {step} makes the browser refuse values `{label}` allows ({})",
                match grid {
                    None => "any decimal, such as 12.555".to_owned(),
                    Some(grid) => format!("multiples of {grid}"),
                }
            ),
            format!("set `step: {wanted}`"),
        ));
        return;
    }
    // A step counts from `min` (else from the starting value, else 0): that base must be on the grid.
    let base = control_low.or_else(|| number_prop(props, "value"));
    if let Some(base) = base.filter(|base| !is_multiple_of(*base, step)) {
        found.push(problem(
            "number_step",
            format!("the control's step {step} counts from {base}, so the browser refuses the multiples of {step} that `{label}` allows"),
            format!(
                "set `min` to {}",
                derived_low.map_or_else(|| "a multiple of the step, or remove it".into(), |low| low.to_string())
            ),
        ));
    }
}

fn check_options(
    component: &str,
    props: &Value,
    offered: &[String],
    field: &FormField,
    found: &mut Vec<Unanswerable>,
) {
    let label = &field.name;
    if let Some(allowed) = field.kind.options() {
        let missing: Vec<&str> = allowed
            .iter()
            .filter(|option| !offered.contains(option))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            found.push(problem(
                "option_missing",
                format!(
                    "`{label}` allows {}, but the {component} offers no option for it",
                    missing.join(", ")
                ),
                "offer every enum value as an option",
            ));
        }
    }
    let fewest = match &field.kind {
        FieldKind::StringArray { min_items, .. } | FieldKind::EnumArray { min_items, .. } => {
            min_items.unwrap_or(0)
        }
        _ => return,
    };
    let count = u64::try_from(offered.len()).unwrap_or(u64::MAX);
    if fewest > count {
        found.push(problem(
            "too_few_options",
            format!("`{label}` needs at least {fewest} choices but the {component} offers {count}"),
            "offer at least minItems options, or lower minItems in the schema",
        ));
    }
    let _ = props;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn money() -> FormField {
        FormField::new(
            "amount",
            FieldKind::Number {
                minimum: Some(0.0),
                maximum: None,
                exclusive_minimum: None,
                exclusive_maximum: None,
                multiple_of: None,
            },
        )
    }

    fn rules(found: &[Unanswerable]) -> Vec<&'static str> {
        found.iter().map(|problem| problem.rule).collect()
    }

    #[test]
    fn derived_props_pass_their_own_check() {
        let half_hours = FormField::new(
            "hours",
            FieldKind::Number {
                minimum: Some(0.3),
                maximum: Some(10.2),
                exclusive_minimum: None,
                exclusive_maximum: None,
                multiple_of: Some(0.5),
            },
        );
        let props = Value::Object(schema_props("Input", &half_hours));
        assert_eq!(props["step"], json!(0.5));
        assert_eq!(props["min"], json!(0.5));
        assert_eq!(props["max"], json!(10.0));
        assert_eq!(check("Input", &props, None, &half_hours), Vec::new());
        let props = Value::Object(schema_props("Input", &money()));
        assert_eq!(props["step"], json!("any"));
        assert_eq!(check("Input", &props, None, &money()), Vec::new());
    }

    #[test]
    fn a_whole_or_cent_step_for_any_decimal_is_refused() {
        for step in [json!(1), json!(0.01)] {
            let props = json!({"type": "number", "step": step, "required": true});
            assert_eq!(
                rules(&check("Input", &props, None, &money())),
                vec!["number_step"]
            );
        }
        let no_step = json!({"type": "number", "required": true});
        let found = check("Input", &no_step, None, &money());
        assert_eq!(rules(&found), vec!["number_step"]);
        assert_eq!(found[0].fix, "set `step: \"any\"`");
    }

    #[test]
    fn completing_fills_only_what_the_model_left_out() {
        let email = FormField::new("email", FieldKind::formatted(StringFormat::Email));
        let mut props = json!({"name": "email", "label": "Work email"});
        complete_props("Input", &mut props, &email);
        assert_eq!(props["type"], json!("email"));
        assert_eq!(props["label"], json!("Work email"));
        assert_eq!(props["required"], json!(true));
        let mut text = json!({"name": "amount", "label": "Amount", "type": "text"});
        complete_props("Input", &mut text, &money());
        assert!(text.get("step").is_none(), "{text}");
    }
}

// The answerability property against a real renderer and the heuristic's pages lives with the
// root crate, which has both: `tests/api/answerable_browser.rs`.
