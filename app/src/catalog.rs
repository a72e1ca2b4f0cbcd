//! The component catalog: every component a model may place, as data.
//!
//! A [`ComponentSpec`] is the single source of truth for one component: its name, a description
//! written for the model, its [`Role`], the JSON Schema of its props (derived with `schemars` from
//! the props type), a validator (deserialize into the props type, then its own checks), a renderer
//! and, for fields, what the field submits. The model's tool definition, the validation of the
//! model's arguments and the HTML all come from that one spec, so nothing about a component is
//! written twice.
//!
//! Built-in components implement [`ComponentProps`] on their props type and become specs through
//! [`ComponentSpec::of`]. Custom components can do the same, or fill a [`ComponentSpec`] by hand.
//! A [`Catalog`] is an ordered registry where a later spec of the same name overrides an earlier
//! one; [`Catalog::resolve`] applies the workflow order: step components, then runner components,
//! then the defaults.
//!
//! This module knows nothing about trees or pages; it must not look at page data itself.

use std::fmt;
use std::sync::{Arc, OnceLock};

use leptos::prelude::AnyView;
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::binding::BoundProps;
use crate::render::NodeCtx;

/// What a component is for; decides how the tree and the form checks treat it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Holds other nodes through `children` (Form, Container, Card, Details).
    Layout,
    /// Shows text or data and submits nothing.
    Display,
    /// Produces form data under a `name`; declares the JSON type it yields.
    Field,
    /// Acts on the form, such as a submit or cancel button.
    Action,
}

impl Role {
    /// The lower-case name used in tool descriptions and JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Layout => "layout",
            Self::Display => "display",
            Self::Field => "field",
            Self::Action => "action",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The JSON type a field's submission decodes to (DESIGN.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldYield {
    /// One string (Input text-like types, `TextArea`, single Select, `RadioGroup`).
    String,
    /// A number that may have a fraction (Input `type=number` with a fractional `step`).
    Number,
    /// A whole number (Input `type=number` with no step or a whole step).
    Integer,
    /// `true` when present, `false` when absent (Checkbox).
    Boolean,
    /// All values of the key (`CheckboxGroup`, multiple Select, `MultiTextInput`, selectable Table).
    StringArray,
    /// An array of objects from controls named by path (`line_items[2].quantity`): a
    /// `RecordList`, whose columns say what each record holds.
    Records,
}

/// What one placed field submits, read from its resolved props.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// The form key the field submits under.
    pub name: String,
    /// The visible label, used in messages to the person and the model.
    pub label: String,
    /// The JSON type of the decoded value.
    pub yields: FieldYield,
    /// The closed set of values the field can submit, when it has one (choices, selectable rows).
    /// `None` means free input. Shared: a selectable table's options are its row ids, and
    /// every check of the page reads them without copying.
    pub options: Option<Arc<[String]>>,
    /// Whether the component itself demands a value (the HTML `required` attribute, or the visible
    /// required mark for groups that HTML cannot enforce).
    pub required: bool,
    /// Set on each array of a component that gives every one of its rows one choice among several
    /// fields (a `DecisionTable`): the `options` are the rows, and a submission may put a row in
    /// only one of [`RowChoice::fields`]. `None` for every other field.
    pub row_choice: Option<Arc<RowChoice>>,
}

impl FieldInfo {
    /// A field of free input (no closed set of values) that is not part of a row choice; add a
    /// closed set with [`FieldInfo::with_options`].
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        label: impl Into<String>,
        yields: FieldYield,
        required: bool,
    ) -> Self {
        Self {
            name: name.into(),
            label: label.into(),
            yields,
            options: None,
            required,
            row_choice: None,
        }
    }

    /// The same field, limited to `options` (`None` leaves it free input).
    #[must_use]
    pub fn with_options(self, options: Option<Arc<[String]>>) -> Self {
        Self { options, ..self }
    }
}

/// Rows shared by several array fields, one choice per row (a `DecisionTable`'s arrays).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowChoice {
    /// The fields a row can be put in, in the component's order: `(name, label)`.
    pub fields: Vec<(String, String)>,
    /// Whether every row must get a choice (`requireAll`); otherwise a row may get none.
    pub every_row: bool,
}

/// Validates resolved props: `Ok` or a message naming what is wrong.
pub type ValidateFn = Arc<dyn Fn(&Value) -> Result<(), String> + Send + Sync>;
/// Renders one node from its resolved props and its already rendered children.
pub type RenderFn = Arc<dyn Fn(&NodeCtx<'_>, &Value, Vec<AnyView>) -> AnyView + Send + Sync>;
/// Checks one node and reads what it submits, deserializing its props once: the props come
/// resolved as the renderer resolves them (by-reference rows left out, see
/// [`ComponentProps::BY_REFERENCE`]) with the [`BoundProps`] those rows are read from.
pub type CheckFn = Arc<dyn Fn(&Value, &BoundProps<'_>) -> NodeCheck + Send + Sync>;

/// A node's props checked against the page data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeCheck {
    /// The component's own check: `Ok` or a message naming what is wrong.
    pub valid: Result<(), String>,
    /// What the node submits: empty for invalid props and for components that submit nothing;
    /// several for a component that fills several fields, such as the `DecisionTable`.
    pub fields: Vec<FieldInfo>,
}

/// Everything about one component, as data. Clone is cheap (the functions are shared).
#[derive(Clone)]
pub struct ComponentSpec {
    /// The name a model uses as the tool name and a tree uses in `component`; unique in a catalog.
    pub name: String,
    /// Written for the model, in one short sentence: when to use it (the tool description, after
    /// a role tag).
    pub description: String,
    /// Layout, display, field or action.
    pub role: Role,
    /// JSON Schema of the props object (inline, no `$ref`, `additionalProperties: false`).
    pub props_schema: Value,
    /// Deserializes resolved props into the props type and runs its checks.
    pub validate: ValidateFn,
    /// Renders the node; must not panic on any input (invalid props render an error box).
    pub render: RenderFn,
    /// The props whose bound rows [`Self::render`] reads through
    /// [`NodeCtx::bound`] rather than from its props: see [`ComponentProps::BY_REFERENCE`].
    pub by_reference: &'static [&'static str],
    /// [`Self::validate`] and the fields submitted, in one reading of the props and without
    /// copying by-reference rows: what a tree check works out per node ([`crate::tree::BoundData`]).
    pub check: CheckFn,
    /// Whether the component can submit data (every field, and Tables with row selection).
    pub submits: bool,
    /// Realistic props for the gallery and tests (may hold `$data` bindings).
    pub example_props: Value,
    /// The page data the example props bind to.
    pub example_data: Value,
}

impl fmt::Debug for ComponentSpec {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("ComponentSpec")
            .field("name", &self.name)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// Implemented by a component's props type; [`ComponentSpec::of`] turns it into a spec.
///
/// The props type derives `Deserialize` and `JsonSchema` with
/// `#[serde(deny_unknown_fields, rename_all = "camelCase")]`, and documents every prop with `///`
/// for people (the gallery shows it); the model's tool schema carries the prop's type, enum and
/// bounds but no prose ([`model_schema`]), so what a model must know about a prop goes in
/// [`Self::DESCRIPTION`].
pub trait ComponentProps: DeserializeOwned + JsonSchema + 'static {
    /// The component's name in trees and tool calls.
    const NAME: &'static str;
    /// The component's role.
    const ROLE: Role;
    /// Whether the component can submit form data (every field, and Tables with row selection).
    const CAN_SUBMIT: bool = matches!(Self::ROLE, Role::Field);
    /// Written for the model, in one short sentence: when to use it, and any prop whose name,
    /// type and enum do not say enough.
    const DESCRIPTION: &'static str;
    /// Top-level array props the component renders straight from the page data: when such a
    /// prop is a whole-value binding to an array, the renderer hands the props type an empty
    /// array in its place, and [`Self::render`] reads the rows with [`NodeCtx::bound`]. Only
    /// for props the props type's checks do not look into, so rendering stays as valid as the
    /// validation; a Table's thousand rows are then never copied to be shown.
    const BY_REFERENCE: &'static [&'static str] = &[];

    /// Realistic example props and the page data they bind to.
    fn example() -> (Value, Value);

    /// Checks that the type system cannot express (ranges, non-empty names, safe URLs).
    ///
    /// # Errors
    ///
    /// A message for the model naming the prop and what to change.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }

    /// What the component submits, if anything; only components with `CAN_SUBMIT` return `Some`.
    fn field(&self) -> Option<FieldInfo> {
        None
    }

    /// Every field the component fills; one component may fill several (the `DecisionTable`
    /// decodes into one array per choice). Defaults to [`Self::field`]. `bound` lends the rows of
    /// the [`Self::BY_REFERENCE`] props, which the props type then holds empty.
    fn fields(&self, _bound: &BoundProps<'_>) -> Vec<FieldInfo> {
        self.field().into_iter().collect()
    }

    /// Renders the component; `children` are the rendered child nodes (layouts only).
    fn render(self, node: &NodeCtx<'_>, children: Vec<AnyView>) -> AnyView;
}

/// Deserializes resolved props into `P` and runs [`ComponentProps::check`].
///
/// # Errors
///
/// The deserialization error (missing or unknown prop, wrong type) or the check's message.
pub fn parse_props<P: ComponentProps>(props: &Value) -> Result<P, String> {
    let empty = Value::Object(Map::new());
    let props = if props.is_null() { &empty } else { props };
    let parsed = P::deserialize(props).map_err(|error| error.to_string())?;
    parsed.check()?;
    Ok(parsed)
}

impl ComponentSpec {
    /// Builds the spec of a component from its props type.
    #[must_use]
    pub fn of<P: ComponentProps>() -> Self {
        let (example_props, example_data) = P::example();
        Self {
            name: P::NAME.to_owned(),
            description: P::DESCRIPTION.to_owned(),
            role: P::ROLE,
            props_schema: props_schema_for::<P>(),
            validate: Arc::new(|props: &Value| parse_props::<P>(props).map(|_| ())),
            render: Arc::new(
                |node: &NodeCtx<'_>, props: &Value, children: Vec<AnyView>| match parse_props::<P>(
                    props,
                ) {
                    Ok(parsed) => parsed.render(node, children),
                    Err(message) => crate::render::node_error(node.id, P::NAME, &message),
                },
            ),
            by_reference: P::BY_REFERENCE,
            check: Arc::new(|props: &Value, bound: &BoundProps<'_>| {
                match parse_props::<P>(props) {
                    Ok(parsed) => NodeCheck {
                        valid: Ok(()),
                        fields: if P::CAN_SUBMIT {
                            parsed.fields(bound)
                        } else {
                            Vec::new()
                        },
                    },
                    Err(message) => NodeCheck {
                        valid: Err(message),
                        fields: Vec::new(),
                    },
                }
            }),
            submits: P::CAN_SUBMIT,
            example_props,
            example_data,
        }
    }

    /// The example props and the page data they bind to, for the gallery and tests.
    #[must_use]
    pub fn example(&self) -> (Value, Value) {
        (self.example_props.clone(), self.example_data.clone())
    }

    /// The model's tool for this component; see [`Catalog::tool_definitions`] for the shape.
    ///
    /// The description is the component's own, after a role tag (`Layout:`, `Field:`,
    /// `Action:`; none for display) that the system prompt explains once. The props schema is
    /// [`model_schema`] of [`Self::props_schema`]: types, enums, bounds and `required` as they
    /// are, without per-prop prose.
    #[must_use]
    pub fn tool_definition(&self) -> Value {
        let tag = match self.role {
            Role::Layout => "Layout: ",
            Role::Field => "Field: ",
            Role::Action => "Action: ",
            Role::Display => "",
        };
        json!({
            "name": self.name,
            "description": format!("{tag}{}", self.description),
            "parameters": model_schema(&self.props_schema)
        })
    }
}

/// The schema keyword a props type puts on a prop (`#[schemars(extend("x-bindable" = true))]`)
/// whose value usually comes from page data: the tool schema also lets it be an object, the
/// binding `{"$data": "/pointer"}` the system prompt describes once for every prop.
pub const BINDABLE: &str = "x-bindable";

/// The schema keyword a props type puts on a prop whose right value follows from the response
/// schema's field: code fills it in when the model leaves it out (`required`, `min`, `max`,
/// `step`, `minLength`) or leaves the check to the server (`pattern`, `maxLength`), and
/// `ValidateForm` refuses any other value. The tool schema leaves such props out, since a
/// model can only break the form with them; trees written by code may still set them.
pub const FROM_SCHEMA: &str = "x-from-schema";

/// Keywords a tool schema never carries: prose and defaults (said once in the system prompt),
/// and `additionalProperties` (unknown props are refused with an error naming them).
const MODEL_OMITS: [&str; 5] = [
    "description",
    "default",
    "additionalProperties",
    "title",
    "examples",
];

/// The props schema as a model is offered it: every type, enum, bound and `required` of
/// `schema`, written tersely. Prop descriptions, defaults and `additionalProperties` go (the
/// component's description and the system prompt say once what a model needs), props marked
/// [`FROM_SCHEMA`] go, a [`BINDABLE`] prop also allows an object (its binding), a string
/// constant becomes an `enum`, an `enum` drops its redundant `type`, an `anyOf` of bare types,
/// objects and one array's `items` becomes a type list, and array items keep only their type
/// and `required` keys (see `shallow_items`).
///
/// A tool call is checked with [`ComponentSpec::validate`] after [`crate::binding::resolve_props`],
/// not against this schema, so a binding on any prop and a [`FROM_SCHEMA`] prop are accepted too.
#[must_use]
pub fn model_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        let mut hidden: Vec<String> = Vec::new();
        if let Some(Value::Object(properties)) = object.get_mut("properties") {
            properties.retain(|name, property| {
                let keep = property.get(FROM_SCHEMA) != Some(&Value::Bool(true));
                if !keep {
                    hidden.push(name.clone());
                }
                keep
            });
            for property in properties.values_mut() {
                let Some(inner) = property.as_object_mut() else {
                    continue;
                };
                if inner.remove(BINDABLE).is_some() {
                    allow_object(inner);
                }
            }
        }
        if let Some(Value::Array(required)) = object.get_mut("required") {
            required.retain(|name| {
                !name
                    .as_str()
                    .is_some_and(|name| hidden.iter().any(|hidden| hidden == name))
            });
            if required.is_empty() {
                object.remove("required");
            }
        }
    }
    terse(&mut schema);
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.values_mut().for_each(shallow_items);
    }
    schema
}

/// An array prop's object items keep their type and required keys, not each key's schema: the
/// keys are all text here (columns `{key, label}`, choices `{name, label}`, events, facts), and
/// the component's description names any optional key. Items of several shapes (a choice's
/// `options`: strings or `{value, label}`) go, as the system prompt says them once. Every
/// call is still checked against the full props type.
fn shallow_items(property: &mut Value) {
    let Some(Value::Object(items)) = property.get_mut("items") else {
        return;
    };
    match items.get("type") {
        Some(Value::String(kind)) if kind == "object" => {
            items.remove("properties");
        }
        Some(Value::Array(_)) => {
            if let Some(property) = property.as_object_mut() {
                property.remove("items");
            }
        }
        _ => {}
    }
}

/// Widens a bindable prop's schema to also accept its binding object.
fn allow_object(schema: &mut Map<String, Value>) {
    match schema.get_mut("type") {
        Some(Value::String(kind)) if kind != "object" => {
            let kind = kind.clone();
            schema.insert("type".to_owned(), json!([kind, "object"]));
        }
        Some(Value::Array(kinds)) if !kinds.iter().any(|kind| kind == "object") => {
            kinds.push(json!("object"));
        }
        _ => {
            if let Some(Value::Array(choices)) = schema.get_mut("anyOf") {
                if !choices
                    .iter()
                    .any(|choice| choice.get("type") == Some(&json!("object")))
                {
                    choices.push(json!({"type": "object"}));
                }
            }
        }
    }
}

/// The rewriting part of [`model_schema`], applied at every level.
fn terse(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            // Inner schemas first, so the rules below see them already terse. A `properties`
            // map holds props, not keywords: a prop named `description` stays.
            for (key, value) in object.iter_mut() {
                if key == "enum" || key == "const" {
                    // Values, not schemas.
                    continue;
                }
                if key == "properties" {
                    if let Value::Object(properties) = value {
                        properties.values_mut().for_each(terse);
                    }
                } else {
                    terse(value);
                }
            }
            for keyword in MODEL_OMITS {
                object.remove(keyword);
            }
            if object.get("items") == Some(&Value::Bool(true)) {
                object.remove("items");
            }
            object.remove(BINDABLE);
            object.remove(FROM_SCHEMA);
            if let Some(constant) = object.remove("const") {
                object.insert("enum".to_owned(), json!([constant]));
            }
            if let Some(Value::Array(choices)) = object.get("oneOf") {
                // Inner constants are already enums: a `oneOf` of enums is their union.
                let values: Option<Vec<Value>> = choices
                    .iter()
                    .map(|choice| choice.get("enum").and_then(Value::as_array).cloned())
                    .collect::<Option<Vec<_>>>()
                    .map(|lists| lists.into_iter().flatten().collect());
                if let Some(values) = values {
                    object.remove("oneOf");
                    object.insert("enum".to_owned(), Value::Array(values));
                }
            }
            if object.contains_key("enum") {
                object.remove("type");
            }
            if let Some(Value::Array(choices)) = object.get("anyOf") {
                // An array alternative's `items` applies to arrays only, so it joins the type
                // list as is. An object alternative's inner shape goes: the one such prop, a
                // choice's `options`, is spelt out once in the system prompt.
                let mut items = None;
                let kinds: Option<Vec<Value>> = choices
                    .iter()
                    .map(|choice| {
                        let only = choice.as_object()?;
                        let kind = only.get("type").filter(|kind| kind.is_string())?;
                        let rest = only.keys().filter(|key| *key != "type");
                        match kind.as_str() {
                            Some("object") => {}
                            Some("array") if items.is_none() => {
                                if rest.clone().any(|key| key != "items") {
                                    return None;
                                }
                                items = only.get("items").cloned();
                            }
                            _ if rest.count() == 0 => {}
                            _ => return None,
                        }
                        Some(kind.clone())
                    })
                    .collect();
                if let Some(kinds) = kinds {
                    object.remove("anyOf");
                    object.insert("type".to_owned(), Value::Array(kinds));
                    if let Some(items) = items {
                        object.insert("items".to_owned(), items);
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(terse),
        _ => {}
    }
}

/// Removes what only adds tokens for a model: `null` alternatives of optional props (a missing
/// prop means the same), `"default": null`, and Rust-specific number formats.
fn simplify(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.get("default").is_some_and(Value::is_null) {
                object.remove("default");
            }
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| {
                    matches!(
                        format,
                        "uint"
                            | "uint8"
                            | "uint16"
                            | "uint32"
                            | "uint64"
                            | "int32"
                            | "int64"
                            | "float"
                            | "double"
                    )
                })
            {
                object.remove("format");
            }
            if let Some(Value::Array(types)) = object.get_mut("type") {
                types.retain(|name| name != "null");
                if types.len() == 1 {
                    let single = types.remove(0);
                    object.insert("type".to_owned(), single);
                }
            }
            if let Some(Value::Array(choices)) = object.get_mut("anyOf") {
                choices.retain(|choice| choice.get("type").and_then(Value::as_str) != Some("null"));
                if choices.len() == 1 {
                    if let Some(Value::Object(only)) = choices.pop() {
                        object.remove("anyOf");
                        for (key, value) in only {
                            // The outer description (the prop's doc) wins over the type's.
                            object.entry(key).or_insert(value);
                        }
                    }
                }
            }
            for value in object.values_mut() {
                simplify(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(simplify),
        _ => {}
    }
}

/// The JSON Schema of a props type: inline subschemas, no `$schema` or `title`, deserialize contract.
#[must_use]
pub fn props_schema_for<P: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .for_deserialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<P>().to_value();
    simplify(&mut schema);
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        object.remove("$schema");
    }
    schema
}

/// An ordered registry of component specs; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    specs: Arc<Vec<ComponentSpec>>,
}

impl Catalog {
    /// An empty catalog.
    #[must_use]
    pub fn empty() -> Self {
        Self::default()
    }

    /// The built-in components, in gallery order. Built once per process, then cloned.
    #[must_use]
    pub fn defaults() -> Self {
        static DEFAULTS: OnceLock<Catalog> = OnceLock::new();
        DEFAULTS
            .get_or_init(|| {
                let mut catalog = Catalog::empty();
                for spec in crate::components::default_specs() {
                    catalog.register(spec);
                }
                catalog
            })
            .clone()
    }

    /// Whether this is [`Self::defaults`] itself (not a copy that registered anything since).
    #[must_use]
    pub fn is_defaults(&self) -> bool {
        Arc::ptr_eq(&self.specs, &Self::defaults().specs)
    }

    /// Adds a spec; a spec with the same name as an existing one replaces it in place.
    pub fn register(&mut self, spec: ComponentSpec) {
        let specs = Arc::make_mut(&mut self.specs);
        match specs.iter_mut().find(|existing| existing.name == spec.name) {
            Some(existing) => *existing = spec,
            None => specs.push(spec),
        }
    }

    /// The workflow resolution: defaults, overridden by runner components, overridden by step
    /// components (the step's spec wins over the runner's, which wins over the default).
    #[must_use]
    pub fn resolve(step: &[ComponentSpec], runner: &[ComponentSpec]) -> Self {
        let mut catalog = Self::defaults();
        for spec in runner.iter().chain(step) {
            catalog.register(spec.clone());
        }
        catalog
    }

    /// The spec named `name`, if any.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&ComponentSpec> {
        self.specs.iter().find(|spec| spec.name == name)
    }

    /// Every spec, in registration order.
    #[must_use]
    pub fn specs(&self) -> &[ComponentSpec] {
        &self.specs
    }

    /// One tool per component, in catalog order, exactly as a model sees them:
    ///
    /// ```json
    /// {"name": "Heading", "description": "…",
    ///  "parameters": {…model_schema of the props…}}
    /// ```
    ///
    /// Flat and terse on purpose (issue 13): the arguments are the props themselves. What every
    /// tool would repeat — the binding rule, the optional `"parent"` every call may add, what the
    /// role tags mean, defaults — the system prompt says once. The tool's answer (the new node's
    /// id, or an error) is the agent loop's business. A layout's tool also takes `children`, an
    /// array of nodes `{"component": "Input", …props, "children"?}`.
    #[must_use]
    pub fn tool_definitions(&self) -> Vec<Value> {
        self.specs
            .iter()
            .map(|spec| with_children(spec.role, spec.tool_definition()))
            .collect()
    }
}

/// A layout's tool also takes `children`: nested component calls placed inside it in the same
/// call (the agent's tools check each node as if placed alone). Kept to one short line, because
/// every model turn sends it; the system prompt says the rest.
fn with_children(role: Role, mut tool: Value) -> Value {
    if role == Role::Layout {
        if let Some(Value::Object(parameters)) = tool.get_mut("parameters") {
            if let Value::Object(properties) =
                parameters.entry("properties").or_insert_with(|| json!({}))
            {
                properties.insert(
                    "children".to_owned(),
                    // The node shape and the all-or-nothing rule are in the system prompt, once.
                    json!({"type": "array"}),
                );
            }
        }
    }
    tool
}

#[cfg(test)]
mod tests {
    use super::*;
    use leptos::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn the_default_catalog_has_the_28_components_of_the_design_the_decision_table_and_structure() {
        let names: Vec<String> = Catalog::defaults()
            .specs()
            .iter()
            .map(|spec| spec.name.clone())
            .collect();
        let expected = [
            "Form",
            "Input",
            "TextArea",
            "Checkbox",
            "Select",
            "RadioGroup",
            "CheckboxGroup",
            "MultiTextInput",
            "Fieldset",
            "RecordList",
            "Button",
            "Text",
            "Heading",
            "Container",
            "Card",
            "Table",
            "DecisionTable",
            "List",
            "KeyValue",
            "Alert",
            "Badge",
            "Stat",
            "ProgressBar",
            "Chart",
            "DownloadLink",
            "Link",
            "Image",
            "Divider",
            "Details",
            "Timeline",
            "Code",
        ];
        assert_eq!(names.len(), 31);
        for name in expected {
            assert!(
                names.iter().any(|existing| existing == name),
                "{name} is missing"
            );
        }
    }

    #[test]
    fn there_is_one_tool_per_component_with_unique_names_and_object_parameters() {
        let catalog = Catalog::defaults();
        let tools = catalog.tool_definitions();
        assert_eq!(tools.len(), catalog.specs().len());
        let names: BTreeSet<&str> = tools
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert_eq!(names.len(), tools.len());
        for tool in &tools {
            assert_eq!(tool["parameters"]["type"], "object", "{tool}");
            // Flat: the arguments are the props; `parent` is said once in the system prompt.
            for wrapper in ["props", "parent", "component"] {
                assert!(
                    tool["parameters"]["properties"].get(wrapper).is_none(),
                    "{tool}"
                );
            }
            assert!(
                tool["description"]
                    .as_str()
                    .is_some_and(|text| text.len() > 20),
                "{tool}"
            );
        }
    }

    #[test]
    fn props_schemas_are_inline_closed_and_documented() {
        for spec in Catalog::defaults().specs() {
            let text = spec.props_schema.to_string();
            assert!(!text.contains("$ref"), "{} has a $ref: {text}", spec.name);
            assert_eq!(
                spec.props_schema["additionalProperties"],
                json!(false),
                "{}",
                spec.name
            );
            if let Some(properties) = spec.props_schema["properties"].as_object() {
                for (prop, schema) in properties {
                    assert!(
                        schema.get("description").is_some(),
                        "{}.{prop} has no description",
                        spec.name
                    );
                }
            }
        }
    }

    /// The `parameters` of the tool named `name`, or null.
    fn parameters_of(tools: &[Value], name: &str) -> Value {
        tools
            .iter()
            .find(|tool| tool["name"] == name)
            .map(|tool| tool["parameters"].clone())
            .unwrap_or_default()
    }

    #[test]
    fn data_like_props_also_accept_a_binding_object_in_the_tool_schema() {
        let tools = Catalog::defaults().tool_definitions();
        let props_of = |name: &str| parameters_of(&tools, name);
        assert_eq!(
            props_of("Table")["properties"]["rows"],
            json!({"type": ["array", "object"]})
        );
        assert_eq!(
            props_of("ProgressBar")["properties"]["max"],
            json!({"type": ["number", "object"]})
        );
        assert_eq!(
            props_of("Heading")["properties"]["text"],
            json!({"type": "string"}),
            "only data-like props are widened; the system prompt says any prop may be bound"
        );
        assert!(!tools.iter().any(|tool| tool.to_string().contains(BINDABLE)));
    }

    #[test]
    fn tool_schemas_keep_enums_bounds_and_required_but_no_prose() {
        let tools = Catalog::defaults().tool_definitions();
        let text = serde_json::to_string(&tools).unwrap_or_default();
        for keyword in [
            "\"default\"",
            "additionalProperties",
            "\"const\"",
            "oneOf",
            "\"x-",
        ] {
            assert!(!text.contains(keyword), "{keyword} is still offered");
        }
        let props_of = |name: &str| parameters_of(&tools, name);
        let button = props_of("Button");
        assert_eq!(
            button["properties"]["variant"],
            json!({"enum": ["primary", "secondary", "danger", "success"]})
        );
        assert_eq!(button["required"], json!(["label"]));
        assert_eq!(
            props_of("Heading")["properties"]["level"],
            json!({"type": "integer", "minimum": 1, "maximum": 4})
        );
        // A prop named like a keyword is still a prop.
        assert_eq!(
            props_of("Form")["properties"]["description"],
            json!({"type": "string"})
        );
        let described: Vec<&str> = tools
            .iter()
            .filter(|tool| {
                tool["parameters"]["properties"]
                    .as_object()
                    .is_some_and(|props| {
                        props.values().any(|prop| prop.get("description").is_some())
                    })
            })
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert!(described.is_empty(), "per-prop prose in {described:?}");
    }

    #[test]
    fn props_code_takes_from_the_response_schema_are_not_offered_but_still_accepted() {
        let Some(input) = Catalog::defaults().get("Input").cloned() else {
            panic!("the default catalog has no Input");
        };
        let tool = input.tool_definition();
        let offered = &tool["parameters"];
        for prop in [
            "required",
            "min",
            "max",
            "step",
            "pattern",
            "minLength",
            "maxLength",
            "help",
            "placeholder",
        ] {
            assert!(
                offered["properties"].get(prop).is_none(),
                "{prop} is offered"
            );
            assert!(
                input.props_schema["properties"].get(prop).is_some(),
                "{prop} left the props type"
            );
        }
        for prop in ["name", "label", "type", "value"] {
            assert!(
                offered["properties"].get(prop).is_some(),
                "{prop} is not offered"
            );
        }
        assert_eq!(offered["required"], json!(["name", "label"]));
        let placed_by_code = json!({"name": "age", "label": "Age", "type": "number",
                                    "min": 0, "step": 1, "required": true});
        assert!((input.validate)(&placed_by_code).is_ok());
    }

    #[test]
    fn every_tool_description_starts_with_its_role_tag() {
        let tags = ["Layout: ", "Field: ", "Action: "];
        for spec in Catalog::defaults().specs() {
            let tool = spec.tool_definition();
            let description = tool["description"].as_str().unwrap_or_default();
            let tag = tags.iter().find(|tag| description.starts_with(**tag));
            let expected = match spec.role {
                Role::Layout => Some(&tags[0]),
                Role::Field => Some(&tags[1]),
                Role::Action => Some(&tags[2]),
                Role::Display => None,
            };
            assert_eq!(tag, expected, "{description}");
        }
    }

    #[test]
    fn a_model_schema_keeps_the_constraints_of_a_schemars_schema_and_drops_the_rest() {
        let schema = json!({
            "type": "object", "additionalProperties": false, "description": "Props.",
            "properties": {
                "mode": {"description": "How.", "oneOf": [
                    {"type": "string", "const": "a", "description": "A."},
                    {"type": "string", "enum": ["b", "c"]}
                ]},
                "value": {"description": "What.", "anyOf": [
                    {"type": "number", "description": "A number."}, {"type": "string"}
                ]},
                "rows": {"type": "array", "items": true, BINDABLE: true, "description": "Rows."},
                "step": {"type": "number", FROM_SCHEMA: true, "minimum": 0},
                "level": {"type": "integer", "minimum": 1, "maximum": 4, "default": 2},
                "description": {"type": "string", "default": null}
            },
            "required": ["mode", "step"]
        });
        assert_eq!(
            model_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "mode": {"enum": ["a", "b", "c"]},
                    "value": {"type": ["number", "string"]},
                    "rows": {"type": ["array", "object"]},
                    "level": {"type": "integer", "minimum": 1, "maximum": 4},
                    "description": {"type": "string"}
                },
                "required": ["mode"]
            })
        );
    }

    #[test]
    fn optional_props_are_not_offered_as_null() {
        let input = Catalog::defaults()
            .get("TextArea")
            .map(|spec| spec.props_schema.clone())
            .unwrap_or_default();
        assert_eq!(
            input["properties"]["value"],
            json!({"type": "string", "description": "The initial text."})
        );
        assert!(!input.to_string().contains("null"), "{input}");
    }

    #[test]
    fn no_component_has_a_prop_named_like_a_call_key() {
        // A call's arguments are the props plus `parent` and `children` (a node adds
        // `component`; the older wrapper keeps them under `props`), so none may be a prop.
        for spec in Catalog::defaults().specs() {
            for key in ["parent", "children", "component", "props"] {
                assert!(
                    spec.props_schema["properties"].get(key).is_none(),
                    "{}.{key}",
                    spec.name
                );
            }
        }
    }

    #[test]
    fn only_layout_tools_take_children() {
        let catalog = Catalog::defaults();
        for (spec, tool) in catalog.specs().iter().zip(catalog.tool_definitions()) {
            let children = &tool["parameters"]["properties"]["children"];
            assert_eq!(
                children.is_object(),
                spec.role == Role::Layout,
                "{}: {children}",
                spec.name
            );
        }
    }

    #[test]
    fn every_field_and_only_submitting_components_report_what_they_submit() {
        for spec in Catalog::defaults().specs() {
            if spec.role == Role::Field {
                assert!(spec.submits, "{}", spec.name);
            }
            if spec.submits {
                assert!(
                    matches!(spec.name.as_str(), "Table") || spec.role == Role::Field,
                    "{}",
                    spec.name
                );
            }
        }
    }

    /// A custom component used by the registration tests.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct ShoutProps {
        /// The text to shout.
        text: String,
    }

    impl ComponentProps for ShoutProps {
        const NAME: &'static str = "Heading";
        const ROLE: Role = Role::Display;
        const DESCRIPTION: &'static str =
            "A heading that shouts its text in capitals; a custom override of the default Heading.";

        fn example() -> (Value, Value) {
            (json!({"text": "quiet"}), json!({}))
        }

        fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
            view! { <p class="shout">{self.text.to_uppercase()}</p> }.into_any()
        }
    }

    #[test]
    fn a_custom_component_overrides_the_default_of_the_same_name() {
        let catalog = Catalog::resolve(&[ComponentSpec::of::<ShoutProps>()], &[]);
        assert_eq!(catalog.specs().len(), Catalog::defaults().specs().len());
        let heading = catalog.get("Heading");
        assert!(heading.is_some_and(|spec| spec.role == Role::Display));
        assert!(
            heading.is_some_and(|spec| (spec.validate)(&json!({"text": "a", "level": 1})).is_err())
        );
        assert!(Catalog::defaults()
            .get("Heading")
            .is_some_and(|spec| spec.role == Role::Display));
        assert!(Catalog::defaults()
            .get("Heading")
            .is_some_and(|spec| (spec.validate)(&json!({"text": "a", "level": 1})).is_ok()));
    }

    #[test]
    fn step_components_win_over_runner_components() {
        let mut runner = ComponentSpec::of::<ShoutProps>();
        runner.name = "Shout".to_owned();
        runner.description = "runner".to_owned();
        let mut step = runner.clone();
        step.description = "step".to_owned();
        let catalog = Catalog::resolve(&[step], &[runner]);
        assert_eq!(catalog.specs().len(), Catalog::defaults().specs().len() + 1);
        assert_eq!(
            catalog.get("Shout").map(|spec| spec.description.as_str()),
            Some("step")
        );
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn a_custom_component_renders_through_the_renderer() {
        use crate::render::{render_tree, RenderCtx};
        use crate::tree::PageTree;
        let mut ctx = RenderCtx::new(json!({}));
        ctx.catalog = Catalog::resolve(&[ComponentSpec::of::<ShoutProps>()], &[]);
        let tree: PageTree = serde_json::from_value(json!({
            "nodes": {"c1": {"component": "Heading", "props": {"text": "hello"}}},
            "order": ["c1"]
        }))
        .unwrap_or_default();
        let html = Owner::new().with(|| render_tree(&tree, &ctx).to_html());
        assert!(html.contains("HELLO"), "{html}");
    }
}
