//! Checkbox, Select, `RadioGroup` and `CheckboxGroup`: fields whose answer comes from a list.

use std::sync::Arc;

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    check_choices, check_name, control_class, Choice, Described, FieldLabel, FieldNotes,
    RequiredMark, TICK_CLASS,
};
use crate::catalog::{ComponentProps, FieldInfo, FieldYield, Role};
use crate::render::{FieldState, NodeCtx};

const LEGEND_CLASS: &str = "text-sm font-medium text-slate-800 dark:text-slate-200";
const OPTION_LABEL_CLASS: &str = "text-slate-800 dark:text-slate-200";

fn option_values(options: &[Choice]) -> Option<Arc<[String]>> {
    Some(
        options
            .iter()
            .map(|option| option.value().to_owned())
            .collect(),
    )
}

fn check_options(options: &[Choice]) -> Result<(), String> {
    if options.is_empty() {
        return Err("`options` must list at least one choice".to_owned());
    }
    check_choices(options)
}

/// Props of the `Checkbox` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckboxProps {
    /// The form key, matching a boolean field of the response schema.
    pub name: String,
    /// The statement the person agrees to by ticking, such as "Also delete attachments".
    pub label: String,
    /// Whether it must be ticked to submit (for consent); a required box always yields true.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub required: bool,
    /// One sentence of help shown under the box.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub help: Option<String>,
    /// Whether it starts ticked.
    #[serde(default)]
    pub checked: bool,
}

impl ComponentProps for CheckboxProps {
    const NAME: &'static str = "Checkbox";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str = "Yes or no; the label says what ticking means.";

    fn example() -> (Value, Value) {
        (
            json!({"name": "notify", "label": "Email me when the archive is done", "checked": true}),
            json!({}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)
    }

    fn field(&self) -> Option<FieldInfo> {
        Some(FieldInfo::new(
            &self.name,
            &self.label,
            FieldYield::Boolean,
            self.required,
        ))
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let state = node.field(&self.name);
        view! { <CheckboxView dom_id=node.dom_id() props=self state/> }.into_any()
    }
}

/// A tick box with its label to the right, help and error below.
#[component]
pub fn CheckboxView(dom_id: String, props: CheckboxProps, state: FieldState) -> impl IntoView {
    let described = Described::new(&dom_id, props.help.as_ref(), state.error.as_ref());
    let described_by = described.by();
    let invalid = state.error.is_some();
    let checked = match &state.values {
        Some(values) => values
            .iter()
            .any(|value| value != "false" && value != "off"),
        None => props.checked,
    };
    view! {
        <div class="space-y-1">
            <div class="flex items-center gap-2">
                <input
                    id=dom_id.clone()
                    type="checkbox"
                    name=props.name
                    value="true"
                    checked=checked
                    required=props.required
                    aria-invalid=invalid.then_some("true")
                    aria-describedby=described_by
                    class=TICK_CLASS
                />
                <label for=dom_id class=OPTION_LABEL_CLASS>
                    {props.label}
                    <RequiredMark required=props.required/>
                </label>
            </div>
            <FieldNotes described help=props.help error=state.error/>
        </div>
    }
}

/// One value or several, as the initial selection of a Select.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single value.
    One(String),
    /// Several values (multiple Select).
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            Self::One(value) => vec![value],
            Self::Many(values) => values,
        }
    }
}

/// Props of the `Select` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SelectProps {
    /// The form key, matching the response schema's field name.
    pub name: String,
    /// The visible label.
    pub label: String,
    /// The choices, as {"value", "label"} objects or plain strings; values must be unique and, for
    /// an enum field, within the enum.
    #[schemars(extend("x-bindable" = true))]
    pub options: Vec<Choice>,
    /// Allow several choices (yields an array of strings) instead of one (yields a string).
    #[serde(default)]
    pub multiple: bool,
    /// Whether a choice must be made.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub required: bool,
    /// One sentence of help shown under the list.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub help: Option<String>,
    /// Text of the empty first entry of a single Select (default "Choose…").
    #[serde(default)]
    pub placeholder: Option<String>,
    /// The initially selected value (or values when multiple).
    #[serde(default)]
    pub value: Option<OneOrMany>,
}

impl ComponentProps for SelectProps {
    const NAME: &'static str = "Select";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str = "A drop-down; multiple picks several.";

    fn example() -> (Value, Value) {
        (
            json!({"name": "folder", "label": "Archive into", "required": true,
                   "options": {"$data": "/folders"}, "value": "old"}),
            json!({"folders": [{"value": "old", "label": "Old mail"}, {"value": "receipts", "label": "Receipts"}, "Misc"]}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        check_options(&self.options)
    }

    fn field(&self) -> Option<FieldInfo> {
        let yields = if self.multiple {
            FieldYield::StringArray
        } else {
            FieldYield::String
        };
        Some(
            FieldInfo::new(&self.name, &self.label, yields, self.required)
                .with_options(option_values(&self.options)),
        )
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let state = node.field(&self.name);
        view! { <SelectView dom_id=node.dom_id() props=self state/> }.into_any()
    }
}

/// A labelled `<select>`, single or multiple.
#[component]
pub fn SelectView(dom_id: String, props: SelectProps, state: FieldState) -> impl IntoView {
    let described = Described::new(&dom_id, props.help.as_ref(), state.error.as_ref());
    let described_by = described.by();
    let invalid = state.error.is_some();
    let selected: Vec<String> = state.values.clone().unwrap_or_else(|| {
        props
            .value
            .clone()
            .map(OneOrMany::into_vec)
            .unwrap_or_default()
    });
    let placeholder = (!props.multiple).then(|| {
        let text = props
            .placeholder
            .clone()
            .unwrap_or_else(|| "Choose\u{2026}".to_owned());
        view! { <option value="">{text}</option> }
    });
    let size = props
        .multiple
        .then(|| props.options.len().clamp(2, 8).to_string());
    let options = props
        .options
        .iter()
        .map(|option| {
            let is_selected = selected.iter().any(|value| value == option.value());
            view! {
                <option value=option.value().to_owned() selected=is_selected>
                    {option.label().to_owned()}
                </option>
            }
        })
        .collect_view();
    view! {
        <div class="space-y-1">
            <FieldLabel for_id=dom_id.clone() label=props.label required=props.required/>
            <select
                id=dom_id
                name=props.name
                multiple=props.multiple
                size=size
                required=props.required
                aria-invalid=invalid.then_some("true")
                aria-describedby=described_by
                class=control_class(invalid)
            >
                {placeholder}
                {options}
            </select>
            {props
                .multiple
                .then(|| {
                    view! {
                        <p class="text-xs text-slate-600 dark:text-slate-300">
                            "Hold Ctrl (or Cmd) to choose several."
                        </p>
                    }
                })}
            <FieldNotes described help=props.help error=state.error/>
        </div>
    }
}

/// Props of the `RadioGroup` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RadioGroupProps {
    /// The form key, matching the response schema's field name.
    pub name: String,
    /// The question, shown as the group's legend.
    pub label: String,
    /// The choices, as {"value", "label"} objects or plain strings; values must be unique.
    #[schemars(extend("x-bindable" = true))]
    pub options: Vec<Choice>,
    /// Whether a choice must be made.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub required: bool,
    /// One sentence of help shown under the legend.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub help: Option<String>,
    /// The initially chosen value.
    #[serde(default)]
    pub value: Option<String>,
}

impl ComponentProps for RadioGroupProps {
    const NAME: &'static str = "RadioGroup";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str = "One of 2 to 5 visible options.";

    fn example() -> (Value, Value) {
        (
            json!({"name": "priority", "label": "Priority", "required": true, "value": "normal",
                   "options": [{"value": "low", "label": "Low"}, {"value": "normal", "label": "Normal"}, {"value": "high", "label": "High"}]}),
            json!({}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        check_options(&self.options)
    }

    fn field(&self) -> Option<FieldInfo> {
        Some(
            FieldInfo::new(&self.name, &self.label, FieldYield::String, self.required)
                .with_options(option_values(&self.options)),
        )
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let state = node.field(&self.name);
        view! { <ChoiceGroupView dom_id=node.dom_id() group=ChoiceGroup::radio(self) state/> }
            .into_any()
    }
}

/// Props of the `CheckboxGroup` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckboxGroupProps {
    /// The form key, matching an array field of the response schema.
    pub name: String,
    /// The question, shown as the group's legend.
    pub label: String,
    /// The choices, as {"value", "label"} objects or plain strings; values must be unique.
    #[schemars(extend("x-bindable" = true))]
    pub options: Vec<Choice>,
    /// Whether at least one must be ticked (shown to the person; the server checks it on submit).
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub required: bool,
    /// One sentence of help shown under the legend.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub help: Option<String>,
    /// The initially ticked values.
    #[serde(default)]
    pub values: Vec<String>,
}

impl ComponentProps for CheckboxGroupProps {
    const NAME: &'static str = "CheckboxGroup";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str = "Any of a short list of options.";

    fn example() -> (Value, Value) {
        (
            json!({"name": "labels", "label": "Labels to apply", "values": ["work"],
                   "options": [{"value": "work", "label": "Work"}, {"value": "family", "label": "Family"}, {"value": "travel", "label": "Travel"}]}),
            json!({}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        check_options(&self.options)
    }

    fn field(&self) -> Option<FieldInfo> {
        Some(
            FieldInfo::new(
                &self.name,
                &self.label,
                FieldYield::StringArray,
                self.required,
            )
            .with_options(option_values(&self.options)),
        )
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let state = node.field(&self.name);
        view! { <ChoiceGroupView dom_id=node.dom_id() group=ChoiceGroup::checkboxes(self) state/> }
            .into_any()
    }
}

/// What a radio group and a checkbox group share.
#[derive(Clone, Debug)]
pub struct ChoiceGroup {
    /// `radio` or `checkbox`.
    pub input_type: &'static str,
    /// The form key.
    pub name: String,
    /// The legend.
    pub label: String,
    /// The choices.
    pub options: Vec<Choice>,
    /// Whether a choice must be made.
    pub required: bool,
    /// Help under the legend.
    pub help: Option<String>,
    /// Initially chosen values.
    pub initial: Vec<String>,
}

impl ChoiceGroup {
    fn radio(props: RadioGroupProps) -> Self {
        Self {
            input_type: "radio",
            name: props.name,
            label: props.label,
            options: props.options,
            required: props.required,
            help: props.help,
            initial: props.value.into_iter().collect(),
        }
    }

    fn checkboxes(props: CheckboxGroupProps) -> Self {
        Self {
            input_type: "checkbox",
            name: props.name,
            label: props.label,
            options: props.options,
            required: props.required,
            help: props.help,
            initial: props.values,
        }
    }
}

/// A `<fieldset>` of radio buttons or tick boxes, each with its own `<label for>`.
#[component]
pub fn ChoiceGroupView(dom_id: String, group: ChoiceGroup, state: FieldState) -> impl IntoView {
    let described = Described::new(&dom_id, group.help.as_ref(), state.error.as_ref());
    let described_by = described.by();
    let invalid = state.error.is_some();
    let chosen = state.values.clone().unwrap_or(group.initial);
    // Radio buttons can be required natively; a group of tick boxes cannot.
    let native_required = group.required && group.input_type == "radio";
    let items = group
        .options
        .iter()
        .enumerate()
        .map(|(index, option)| {
            let option_id = format!("{dom_id}-{index}");
            let checked = chosen.iter().any(|value| value == option.value());
            view! {
                <div class="flex items-center gap-2">
                    <input
                        id=option_id.clone()
                        type=group.input_type
                        name=group.name.clone()
                        value=option.value().to_owned()
                        checked=checked
                        required=native_required
                        aria-invalid=invalid.then_some("true")
                        class=TICK_CLASS
                    />
                    <label for=option_id class=OPTION_LABEL_CLASS>
                        {option.label().to_owned()}
                    </label>
                </div>
            }
        })
        .collect_view();
    view! {
        <fieldset id=dom_id class="space-y-2" aria-describedby=described_by>
            <legend class=LEGEND_CLASS>{group.label} <RequiredMark required=group.required/></legend>
            <div class="space-y-1">{items}</div>
            <FieldNotes described help=group.help error=state.error/>
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multiple_select_yields_an_array_and_a_single_one_a_string() -> Result<(), String> {
        let single: SelectProps =
            crate::catalog::parse_props(&json!({"name": "a", "label": "A", "options": ["x"]}))?;
        assert_eq!(
            single.field().map(|info| info.yields),
            Some(FieldYield::String)
        );
        let multiple: SelectProps = crate::catalog::parse_props(
            &json!({"name": "a", "label": "A", "options": ["x"], "multiple": true}),
        )?;
        assert_eq!(
            multiple.field().map(|info| info.yields),
            Some(FieldYield::StringArray)
        );
        Ok(())
    }

    #[test]
    fn options_must_be_present_and_unique() {
        let empty = crate::catalog::parse_props::<RadioGroupProps>(
            &json!({"name": "a", "label": "A", "options": []}),
        );
        assert!(empty.is_err());
        let repeated = crate::catalog::parse_props::<CheckboxGroupProps>(
            &json!({"name": "a", "label": "A", "options": ["x", {"value": "x", "label": "X"}]}),
        );
        assert!(repeated.is_err_and(|message| message.contains("twice")));
    }

    #[test]
    fn reserved_and_empty_names_are_rejected() {
        assert!(crate::catalog::parse_props::<CheckboxProps>(
            &json!({"name": "_csrf", "label": "A"})
        )
        .is_err());
        assert!(
            crate::catalog::parse_props::<CheckboxProps>(&json!({"name": " ", "label": "A"}))
                .is_err()
        );
    }
}
