//! Input and `TextArea`: free-text fields.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Number, Value};

use super::{check_name, control_class, Described, FieldLabel, FieldNotes};
use crate::catalog::{ComponentProps, FieldInfo, FieldYield, Role};
use crate::render::{FieldState, NodeCtx};

/// The kind of text an Input takes.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    // Free text.
    #[default]
    Text,
    // An email address.
    Email,
    // A number; yields an integer unless `step` has a fraction.
    Number,
    // A secret; never re-filled after a rejected submission.
    Password,
    // A web address.
    Url,
    // A calendar date, submitted as YYYY-MM-DD.
    Date,
}

impl InputType {
    /// The HTML `type` attribute.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Email => "email",
            Self::Number => "number",
            Self::Password => "password",
            Self::Url => "url",
            Self::Date => "date",
        }
    }

    fn autocomplete(self) -> Option<&'static str> {
        match self {
            Self::Email => Some("email"),
            Self::Url => Some("url"),
            Self::Password => Some("current-password"),
            Self::Text | Self::Number | Self::Date => None,
        }
    }
}

/// A number or a text, as written by the model (`5`, `"2024-01-31"`).
#[derive(Clone, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum NumberOrText {
    /// A number.
    Number(Number),
    /// A text, such as a date.
    Text(String),
}

impl NumberOrText {
    /// The attribute text.
    #[must_use]
    pub fn text(&self) -> String {
        match self {
            Self::Number(number) => number.to_string(),
            Self::Text(text) => text.clone(),
        }
    }

    fn is_whole(&self) -> bool {
        match self {
            Self::Number(number) => {
                number.is_i64()
                    || number.is_u64()
                    || number.as_f64().is_some_and(|value| value.fract() == 0.0)
            }
            Self::Text(text) => text.parse::<f64>().is_ok_and(|value| value.fract() == 0.0),
        }
    }
}

/// An HTML `step`: a positive number, or `"any"` for a number with any decimals.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum Step {
    /// Values must be the minimum (else 0) plus a whole multiple of this.
    Value(f64),
    /// Any number.
    Any(AnyStep),
}

/// The word `"any"`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AnyStep {
    /// Any number.
    Any,
}

impl Step {
    /// The attribute text.
    #[must_use]
    pub fn text(self) -> String {
        match self {
            Self::Value(step) => step.to_string(),
            Self::Any(_) => "any".to_owned(),
        }
    }
}

/// Props of the `Input` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InputProps {
    /// The form key, matching the response schema's field name.
    pub name: String,
    /// The visible label, a short noun phrase such as "Work email".
    pub label: String,
    /// text (default), email, number, password, url or date.
    #[serde(default, rename = "type")]
    pub input_type: InputType,
    /// Whether the person must fill it in.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub required: bool,
    /// An example of the expected input, shown greyed inside the box; never a substitute for the label.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub placeholder: Option<String>,
    /// One sentence of help shown under the field.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub help: Option<String>,
    /// Smallest allowed value (number or date, e.g. 0 or "2024-01-01").
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub min: Option<NumberOrText>,
    /// Largest allowed value (number or date).
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub max: Option<NumberOrText>,
    /// Granularity of a number: "any" for a decimal with any digits, the schema's multipleOf
    /// (0.5, 0.01) for steps; omit or use a whole number for integers.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub step: Option<Step>,
    /// A regular expression the whole value must match (HTML `pattern`).
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub pattern: Option<String>,
    /// Fewest characters allowed.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub min_length: Option<u32>,
    /// Most characters allowed.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub max_length: Option<u32>,
    /// The initial value.
    #[serde(default)]
    pub value: Option<NumberOrText>,
}

impl ComponentProps for InputProps {
    const NAME: &'static str = "Input";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str = "A one-line answer.";

    fn example() -> (Value, Value) {
        (
            json!({
                "name": "email", "label": "Work email", "type": "email", "required": true,
                "placeholder": "ada@example.com", "help": "We send the receipt here.",
                "value": "{{/user/email}}"
            }),
            json!({"user": {"email": "ada@example.com"}}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        if let Some(Step::Value(step)) = self.step {
            if !(step.is_finite() && step > 0.0) {
                return Err("`step` must be a positive number".to_owned());
            }
        }
        if let (Some(min), Some(max)) = (self.min_length, self.max_length) {
            if min > max {
                return Err("`minLength` is larger than `maxLength`".to_owned());
            }
        }
        Ok(())
    }

    fn field(&self) -> Option<FieldInfo> {
        let yields = match self.input_type {
            InputType::Number => {
                let whole_step = match self.step {
                    None => true,
                    Some(Step::Value(step)) => step.fract() == 0.0,
                    Some(Step::Any(_)) => false,
                };
                let whole_base = self.min.as_ref().is_none_or(NumberOrText::is_whole);
                if whole_step && whole_base {
                    FieldYield::Integer
                } else {
                    FieldYield::Number
                }
            }
            _ => FieldYield::String,
        };
        Some(FieldInfo::new(
            &self.name,
            &self.label,
            yields,
            self.required,
        ))
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let state = node.field(&self.name);
        view! { <InputView dom_id=node.dom_id() props=self state/> }.into_any()
    }
}

/// A labelled `<input>` with help and error text.
#[component]
pub fn InputView(dom_id: String, props: InputProps, state: FieldState) -> impl IntoView {
    let described = Described::new(&dom_id, props.help.as_ref(), state.error.as_ref());
    let described_by = described.by();
    let invalid = state.error.is_some();
    let value = if props.input_type == InputType::Password {
        None
    } else {
        state
            .last()
            .map(str::to_owned)
            .or_else(|| props.value.as_ref().map(NumberOrText::text))
    };
    view! {
        <div class="space-y-1">
            <FieldLabel for_id=dom_id.clone() label=props.label required=props.required/>
            <input
                id=dom_id
                name=props.name
                type=props.input_type.as_str()
                value=value
                required=props.required
                placeholder=props.placeholder
                min=props.min.as_ref().map(NumberOrText::text)
                max=props.max.as_ref().map(NumberOrText::text)
                step=props.step.map(Step::text)
                pattern=props.pattern
                minlength=props.min_length.map(|length| length.to_string())
                maxlength=props.max_length.map(|length| length.to_string())
                autocomplete=props.input_type.autocomplete()
                aria-invalid=invalid.then_some("true")
                aria-describedby=described_by
                class=control_class(invalid)
            />
            <FieldNotes described help=props.help error=state.error/>
        </div>
    }
}

/// Escapes text for the inside of a `<textarea>` (`&`, `<` and `>`), which Leptos does not do.
pub use crate::escape::escape_text as escape_textarea;

/// Props of the `TextArea` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TextAreaProps {
    /// The form key, matching the response schema's field name.
    pub name: String,
    /// The visible label.
    pub label: String,
    /// Whether the person must fill it in.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub required: bool,
    /// An example of the expected text, shown greyed inside the box.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub placeholder: Option<String>,
    /// One sentence of help shown under the field.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub help: Option<String>,
    /// Visible lines, 2 to 20 (default 4).
    #[serde(default)]
    #[schemars(range(min = 2, max = 20))]
    pub rows: Option<u8>,
    /// Fewest characters allowed.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub min_length: Option<u32>,
    /// Most characters allowed.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub max_length: Option<u32>,
    /// The initial text.
    #[serde(default)]
    pub value: Option<String>,
}

impl ComponentProps for TextAreaProps {
    const NAME: &'static str = "TextArea";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str = "Multi-line free text.";

    fn example() -> (Value, Value) {
        (
            json!({"name": "reason", "label": "Why are these archived?", "rows": 4,
                   "help": "Optional; shown in the audit log.", "maxLength": 500}),
            json!({}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        if self.rows.is_some_and(|rows| !(2..=20).contains(&rows)) {
            return Err("`rows` must be between 2 and 20".to_owned());
        }
        Ok(())
    }

    fn field(&self) -> Option<FieldInfo> {
        Some(FieldInfo::new(
            &self.name,
            &self.label,
            FieldYield::String,
            self.required,
        ))
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let state = node.field(&self.name);
        view! { <TextAreaView dom_id=node.dom_id() props=self state/> }.into_any()
    }
}

/// A labelled `<textarea>` with help and error text.
#[component]
pub fn TextAreaView(dom_id: String, props: TextAreaProps, state: FieldState) -> impl IntoView {
    let described = Described::new(&dom_id, props.help.as_ref(), state.error.as_ref());
    let described_by = described.by();
    let invalid = state.error.is_some();
    // A parser drops one newline right after `<textarea>`; lead with one so the value's own survive.
    // Leptos writes `<textarea>` children without escaping them (it treats them as raw text), so
    // escape here: the browser decodes entities inside a textarea, so the person sees the text.
    let value = format!(
        "\n{}",
        escape_textarea(
            &state
                .last()
                .map(str::to_owned)
                .or(props.value)
                .unwrap_or_default()
        )
    );
    view! {
        <div class="space-y-1">
            <FieldLabel for_id=dom_id.clone() label=props.label required=props.required/>
            <textarea
                id=dom_id
                name=props.name
                rows=props.rows.unwrap_or(4).to_string()
                required=props.required
                placeholder=props.placeholder
                minlength=props.min_length.map(|length| length.to_string())
                maxlength=props.max_length.map(|length| length.to_string())
                aria-invalid=invalid.then_some("true")
                aria-describedby=described_by
                class=control_class(invalid)
            >
                {value}
            </textarea>
            <FieldNotes described help=props.help error=state.error/>
        </div>
    }
}
