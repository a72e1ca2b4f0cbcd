//! The tools a model builds a page with, and what code does when one is called.
//!
//! One tool per catalog component (its definition comes from the component's spec, DESIGN.md §3)
//! plus four of the loop's own: [`VALIDATE_FORM`], [`REMOVE_COMPONENT`], [`UPDATE_COMPONENT`] and
//! [`FINISH`]. [`Workspace::execute`] runs one call against the page being built and answers the
//! way the model can act on: `{"id": "c7"}` for a placed component, or a tool error
//! `{"error": {"rule", "message", "fix", …}}` naming what to change. Nothing here talks to a model
//! or the store; the loop (`generate.rs`) does.

use std::cell::RefCell;

use serde::Deserialize;
use serde_json::{json, Value};
use tessera_app::{
    catalog::Catalog,
    tree::{PageTree, TreeIssue},
};

use crate::{
    forms::{
        validate_form::{validate_form, FormReport},
        FormSchema,
    },
    llm::{ToolCall, ToolDefinition},
};

/// Checks the page and returns the `ValidateForm` report (errors and page-quality warnings).
pub const VALIDATE_FORM: &str = "ValidateForm";
/// Removes a placed component and everything inside it.
pub const REMOVE_COMPONENT: &str = "RemoveComponent";
/// Replaces the props of a placed component.
pub const UPDATE_COMPONENT: &str = "UpdateComponent";
/// Says the page is complete; code then checks it.
pub const FINISH: &str = "Finish";

/// The names of the loop's own tools, which no component may take.
pub const AGENT_TOOLS: [&str; 4] = [VALIDATE_FORM, REMOVE_COMPONENT, UPDATE_COMPONENT, FINISH];

/// Every tool offered to the model: one per component, in catalog order, then the loop's own.
#[must_use]
pub fn tool_definitions(catalog: &Catalog) -> Vec<ToolDefinition> {
    let mut tools: Vec<ToolDefinition> = catalog
        .tool_definitions()
        .into_iter()
        .filter_map(|tool| {
            Some(ToolDefinition {
                name: tool.get("name")?.as_str()?.to_owned(),
                description: tool.get("description")?.as_str()?.to_owned(),
                parameters: tool.get("parameters")?.clone(),
            })
        })
        .collect();
    tools.push(ToolDefinition {
        name: VALIDATE_FORM.to_owned(),
        description:
            "Checks the page now: {ok, errors, warnings}, each with a rule, message and fix."
                .to_owned(),
        parameters: json!({"type": "object", "properties": {}}),
    });
    tools.push(ToolDefinition {
        name: REMOVE_COMPONENT.to_owned(),
        description: "Removes a placed component and what is inside it.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"]
        }),
    });
    tools.push(ToolDefinition {
        name: UPDATE_COMPONENT.to_owned(),
        description: "Replaces all props of a placed component; its place stays.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "props": {"type": "object"}},
            "required": ["id", "props"]
        }),
    });
    tools.push(ToolDefinition {
        name: FINISH.to_owned(),
        description: "Call when the page is complete; code checks it.".to_owned(),
        parameters: json!({"type": "object", "properties": {"summary": {"type": "string"}}}),
    });
    tools
}

/// What a call did, for the loop's bookkeeping and events.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// A component was placed with this id.
    Placed {
        /// The new node's id.
        id: String,
        /// Its component.
        component: String,
    },
    /// A component's props were replaced.
    Updated {
        /// The node's id.
        id: String,
    },
    /// Components were removed.
    Removed {
        /// Every removed id.
        ids: Vec<String>,
    },
    /// The model asked for the report.
    Validated(FormReport),
    /// The model says the page is done.
    Finish,
    /// The call was refused; the reply is the error.
    Refused,
}

/// The answer to one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The tool result sent back to the model.
    pub content: Value,
    /// Whether the model should read `content` as an error.
    pub is_error: bool,
    /// What happened.
    pub effect: Effect,
}

impl Reply {
    fn ok(content: Value, effect: Effect) -> Self {
        Self {
            content,
            is_error: false,
            effect,
        }
    }

    fn refused(rule: &str, message: &str, fix: &str) -> Self {
        Self {
            content: json!({"error": {"rule": rule, "message": message, "fix": fix}}),
            is_error: true,
            effect: Effect::Refused,
        }
    }

    fn from_issue(issue: TreeIssue) -> Self {
        let mut error = json!({"rule": issue.rule, "message": issue.message, "fix": issue.fix});
        if let Some(node) = issue.node {
            error["node"] = json!(node);
        }
        if let Some(field) = issue.field {
            error["field"] = json!(field);
        }
        Self {
            content: json!({ "error": error }),
            is_error: true,
            effect: Effect::Refused,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ComponentArgs {
    props: Value,
    #[serde(default)]
    parent: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoveArgs {
    id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    id: String,
    props: Value,
}

/// The page being built, with what it is checked against.
#[derive(Clone, Debug)]
pub struct Workspace<'a> {
    /// The tree so far.
    pub tree: PageTree,
    catalog: &'a Catalog,
    schema: Option<&'a FormSchema>,
    data: &'a Value,
    /// The last report and the tree it was made for: the loop checks an unchanged tree several
    /// times (`Finish`, end of turn, end of attempt), and a check walks every bound row.
    checked: RefCell<Option<(PageTree, FormReport)>>,
}

impl<'a> Workspace<'a> {
    /// An empty page for `schema` over `data`, built from `catalog`'s components.
    #[must_use]
    pub fn new(catalog: &'a Catalog, schema: Option<&'a FormSchema>, data: &'a Value) -> Self {
        Self {
            tree: PageTree::default(),
            catalog,
            schema,
            data,
            checked: RefCell::new(None),
        }
    }

    /// Code's own check of the current tree (`ValidateForm`; without a schema, a non-empty,
    /// well-formed tree).
    #[must_use]
    pub fn check(&self) -> FormReport {
        if let Some((tree, report)) = self.checked.borrow().as_ref() {
            if *tree == self.tree {
                return report.clone();
            }
        }
        let report = validate_form(&self.tree, self.catalog, self.schema, self.data);
        *self.checked.borrow_mut() = Some((self.tree.clone(), report.clone()));
        report
    }

    /// `props` for `component` with what the schema says about its field and the model left
    /// out (input type, step, bounds, required, help, placeholder, default) filled in.
    fn completed(&self, component: &str, mut props: Value) -> Value {
        let field = self.schema.and_then(|schema| {
            props
                .get("name")
                .and_then(Value::as_str)
                .and_then(|name| schema.field(name))
        });
        let is_field = self
            .catalog
            .get(component)
            .is_some_and(|spec| spec.field_info.is_some());
        if let (Some(field), true) = (field, is_field) {
            crate::forms::answerable::complete_props(component, &mut props, field);
        }
        props
    }

    /// Runs one call and answers it.
    pub fn execute(&mut self, call: &ToolCall) -> Reply {
        let arguments = match &call.arguments {
            Ok(arguments) => arguments,
            Err(malformed) => {
                return Reply::refused(
                    "malformed_arguments",
                    &format!("arguments are not valid JSON: {}", malformed.error),
                    &format!(
                        "Call {} again with one JSON object as its arguments.",
                        call.name
                    ),
                )
            }
        };
        match call.name.as_str() {
            VALIDATE_FORM => {
                let report = self.check();
                let content = serde_json::to_value(&report).unwrap_or(Value::Null);
                Reply::ok(content, Effect::Validated(report))
            }
            FINISH => Reply::ok(json!({"received": true}), Effect::Finish),
            REMOVE_COMPONENT => match parse::<RemoveArgs>(REMOVE_COMPONENT, arguments) {
                Err(reply) => *reply,
                Ok(args) => match self.tree.remove(&args.id) {
                    Ok(ids) => Reply::ok(json!({"removed": ids}), Effect::Removed { ids }),
                    Err(issue) => Reply::from_issue(issue),
                },
            },
            UPDATE_COMPONENT => match parse::<UpdateArgs>(UPDATE_COMPONENT, arguments) {
                Err(reply) => *reply,
                Ok(args) => {
                    let component = self
                        .tree
                        .nodes
                        .get(&args.id)
                        .map(|node| node.component.clone())
                        .unwrap_or_default();
                    let props = self.completed(&component, lenient_props(args.props));
                    match self.tree.update(self.catalog, self.data, &args.id, props) {
                        Ok(()) => Reply::ok(
                            json!({"id": args.id, "updated": true}),
                            Effect::Updated { id: args.id },
                        ),
                        Err(issue) => Reply::from_issue(issue),
                    }
                }
            },
            component if self.catalog.get(component).is_some() => {
                match parse::<ComponentArgs>(component, arguments) {
                    Err(reply) => *reply,
                    Ok(args) => {
                        let props = self.completed(component, lenient_props(args.props));
                        match self.tree.add(
                            self.catalog,
                            self.data,
                            component,
                            props,
                            args.parent.as_deref().filter(|parent| !parent.is_empty()),
                        ) {
                            Ok(id) => Reply::ok(
                                json!({ "id": id }),
                                Effect::Placed {
                                    id,
                                    component: component.to_owned(),
                                },
                            ),
                            Err(issue) => Reply::from_issue(issue),
                        }
                    }
                }
            }
            unknown => {
                let mut names: Vec<&str> = self
                    .catalog
                    .specs()
                    .iter()
                    .map(|spec| spec.name.as_str())
                    .collect();
                names.extend(AGENT_TOOLS);
                Reply::refused(
                    "unknown_tool",
                    &format!("There is no tool \"{unknown}\"."),
                    &format!("Call one of: {}.", names.join(", ")),
                )
            }
        }
    }
}

/// Reads a tool's arguments into its typed input, or answers with what is wrong.
fn parse<T: serde::de::DeserializeOwned>(tool: &str, arguments: &Value) -> Result<T, Box<Reply>> {
    T::deserialize(arguments).map_err(|error| {
        let shape = match tool {
            REMOVE_COMPONENT => "{\"id\": \"c3\"}",
            UPDATE_COMPONENT => "{\"id\": \"c3\", \"props\": {…}}",
            _ => "{\"props\": {…}, \"parent\": \"c2\"} (parent optional)",
        };
        Box::new(Reply::refused(
            "invalid_arguments",
            &format!("The arguments of {tool} do not fit its schema: {error}"),
            &format!("Call {tool} again with arguments shaped {shape}."),
        ))
    })
}

/// Props sent as a JSON string holding an object (a common model slip) are read as that object;
/// `null` is read as no props.
fn lenient_props(props: Value) -> Value {
    match props {
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(object @ Value::Object(_)) => object,
            _ => Value::String(text),
        },
        Value::Null => json!({}),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        forms::{FieldKind, FormField},
        llm::MalformedArguments,
    };

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall::new("call", name, arguments)
    }

    #[test]
    fn every_component_and_the_four_agent_tools_are_offered() {
        let catalog = Catalog::defaults();
        let tools = tool_definitions(&catalog);
        assert_eq!(tools.len(), catalog.specs().len() + 4);
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        for name in AGENT_TOOLS {
            assert!(names.contains(&name), "{name}");
        }
        assert!(tools.iter().all(|tool| tool.parameters["type"] == "object"));
    }

    /// What one model turn offers before the user prompt: the system prompt and every tool
    /// definition, as sent (issue 13 budget; see BENCHMARKS.md for the figures).
    fn offer_bytes(catalog: &Catalog) -> usize {
        let system = crate::agent::prompt::system_prompt(true).unwrap_or_default();
        let tools = serde_json::to_string(&tool_definitions(catalog)).unwrap_or_default();
        system.len() + tools.len()
    }

    /// The most bytes the offer for the default catalog may take. Issue 13 asked for 12 KB; the
    /// compact offer is about 15.1 KB and cannot reach 12 KB without dropping prop types or props
    /// a model uses (BENCHMARKS.md, "Prompt size per turn"). Additions — another tool, a prop on
    /// every tool — must fit here or pay for themselves.
    const OFFER_BUDGET: usize = 16_000;

    #[test]
    fn the_offer_for_the_default_catalog_stays_within_its_budget() {
        let bytes = offer_bytes(&Catalog::defaults());
        eprintln!("system prompt and tool definitions: {bytes} bytes");
        assert!(bytes > 4_000, "{bytes} bytes: the offer lost its tools");
        assert!(
            bytes <= OFFER_BUDGET,
            "system prompt and tools grew to {bytes} bytes"
        );
    }

    /// The props schema a tool offers, compiled.
    fn offered_props(tool: &ToolDefinition) -> (Value, jsonschema::Validator) {
        let schema = tool.parameters["properties"]["props"].clone();
        let validator = jsonschema::validator_for(&schema)
            .unwrap_or_else(|error| panic!("{}: {error}", tool.name));
        (schema, validator)
    }

    /// Values of every JSON type; a mutation picks those a prop's schema does not allow.
    fn values_of_every_type() -> [(&'static str, Value); 5] {
        [
            ("string", json!("some text")),
            ("number", json!(12.5)),
            ("boolean", json!(true)),
            ("array", json!([{"odd": 1}])),
            ("object", json!({"odd": 1})),
        ]
    }

    #[test]
    fn tool_schemas_accept_every_example_and_refuse_what_validate_refuses() {
        let catalog = Catalog::defaults();
        let mut checked = 0;
        for (spec, tool) in catalog.specs().iter().zip(tool_definitions(&catalog)) {
            let (schema, validator) = offered_props(&tool);
            let (example, data) = spec.example();
            let validate = |props: &Value| {
                (spec.validate)(&tessera_app::binding::resolve_props(props, &data)).is_ok()
            };
            assert!(validate(&example), "{}'s example is invalid", spec.name);
            assert!(
                validator.is_valid(&example),
                "{} refuses its example",
                spec.name
            );
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let mut mutations: Vec<(String, Value)> = Vec::new();
            for (prop, prop_schema) in &properties {
                let types: Vec<&str> = match &prop_schema["type"] {
                    Value::String(kind) => vec![kind.as_str()],
                    Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                if !types.is_empty() {
                    // 12.5 is no integer, so an integer prop gets the number too.
                    for (kind, value) in values_of_every_type() {
                        if !types.contains(&kind) {
                            let mut mutated = example.clone();
                            mutated[prop.as_str()] = value;
                            mutations.push((format!("{prop} as {kind}"), mutated));
                        }
                    }
                }
                if prop_schema.get("enum").is_some() {
                    let mut mutated = example.clone();
                    mutated[prop.as_str()] = json!("not-one-of-them");
                    mutations.push((format!("{prop} outside its enum"), mutated));
                }
                for (bound, step) in [("minimum", -1.0), ("maximum", 1.0)] {
                    if let Some(limit) = prop_schema.get(bound).and_then(Value::as_f64) {
                        let mut mutated = example.clone();
                        mutated[prop.as_str()] = json!(limit + step);
                        mutations.push((format!("{prop} past its {bound}"), mutated));
                    }
                }
            }
            for required in schema["required"].as_array().into_iter().flatten() {
                let mut mutated = example.clone();
                if let Some(props) = mutated.as_object_mut() {
                    props.remove(required.as_str().unwrap_or_default());
                }
                mutations.push((format!("without {required}"), mutated));
            }
            for (what, mutated) in mutations {
                assert!(
                    !validate(&mutated),
                    "{} {what}: validate accepts it, so the schema must not refuse it",
                    spec.name
                );
                assert!(
                    !validator.is_valid(&mutated),
                    "{} {what}: validate refuses it but the offered schema accepts it",
                    spec.name
                );
                checked += 1;
            }
        }
        eprintln!("{checked} mutations checked");
        assert!(checked > 100, "only {checked} mutations");
    }

    #[test]
    fn props_left_out_of_the_tool_schemas_are_filled_in_by_code_or_refused_by_it() {
        use crate::forms::answerable::{check, schema_props};
        use tessera_app::catalog::FROM_SCHEMA;
        let schema = FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "amount": {"type": "number", "minimum": 0, "maximum": 10, "multipleOf": 0.5},
                "count": {"type": "integer", "minimum": 1},
                "code": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^a"},
                "note": {"type": "string"},
                "agree": {"type": "boolean"},
                "size": {"type": "string", "enum": ["s", "m"]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1},
                "emails": {"type": "array", "items": {"type": "string"}, "minItems": 1}
            },
            "required": ["amount", "count", "code", "size", "tags", "emails"]
        }))
        .unwrap_or_else(|error| panic!("{error}"));
        let mut hidden_count = 0;
        for spec in Catalog::defaults().specs() {
            let properties = spec.props_schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for (prop, prop_schema) in properties {
                if prop_schema.get(FROM_SCHEMA) != Some(&json!(true)) {
                    continue;
                }
                hidden_count += 1;
                let derived = schema
                    .fields
                    .iter()
                    .any(|field| schema_props(&spec.name, field).contains_key(&prop));
                let refused = [json!("^a"), json!(5), json!(true)].iter().any(|value| {
                    schema.fields.iter().any(|field| {
                        let mut props = Value::Object(schema_props(&spec.name, field));
                        props["name"] = json!(field.name);
                        props[prop.as_str()] = value.clone();
                        (spec.validate)(&props).is_ok()
                            && check(&spec.name, &props, None, field)
                                .iter()
                                .any(|problem| problem.fix.contains(&format!("`{prop}`")))
                    })
                });
                assert!(
                    derived || refused,
                    "{}.{prop} is not offered, yet code neither fills it in nor refuses it",
                    spec.name
                );
            }
        }
        assert!(hidden_count >= 8, "{hidden_count}");
    }

    #[test]
    fn components_are_placed_under_their_parent_and_answered_with_their_id() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let schema = FormSchema::new(vec![FormField::new("note", FieldKind::string())]);
        let mut workspace = Workspace::new(&catalog, Some(&schema), &data);
        let form = workspace.execute(&call("Form", json!({"props": {}})));
        assert_eq!(form.content, json!({"id": "c1"}));
        let input = workspace.execute(&call(
            "TextArea",
            json!({"props": "{\"name\": \"note\", \"label\": \"Note\", \"required\": true}", "parent": "c1"}),
        ));
        assert_eq!(input.content, json!({"id": "c2"}), "string props are read");
        let button = workspace.execute(&call(
            "Button",
            json!({"props": {"label": "Save"}, "parent": "c1"}),
        ));
        assert!(!button.is_error);
        let report = workspace.execute(&call(VALIDATE_FORM, json!({})));
        assert_eq!(report.content["ok"], json!(true), "{}", report.content);
    }

    #[test]
    fn refusals_are_structured_errors_the_model_can_act_on() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut workspace = Workspace::new(&catalog, None, &data);
        let malformed = workspace.execute(&ToolCall {
            id: "x".into(),
            name: "Heading".into(),
            arguments: Err(MalformedArguments {
                raw: "{\"props\": {".into(),
                error: "EOF while parsing an object".into(),
            }),
            signature: None,
        });
        assert!(malformed.is_error);
        assert_eq!(malformed.content["error"]["rule"], "malformed_arguments");
        assert_eq!(
            malformed.content["error"]["message"],
            "arguments are not valid JSON: EOF while parsing an object"
        );
        let invalid = workspace.execute(&call("Heading", json!({"props": {"level": 9}})));
        assert_eq!(invalid.content["error"]["rule"], "invalid_props");
        assert!(invalid.content["error"]["fix"].as_str().is_some());
        let flattened = workspace.execute(&call("Heading", json!({"text": "Hi"})));
        assert_eq!(flattened.content["error"]["rule"], "invalid_arguments");
        let unknown = workspace.execute(&call("Marquee", json!({})));
        assert_eq!(unknown.content["error"]["rule"], "unknown_tool");
        let missing = workspace.execute(&call(REMOVE_COMPONENT, json!({"id": "c9"})));
        assert_eq!(missing.content["error"]["rule"], "unknown_node");
        assert!(workspace.tree.is_empty());
    }

    #[test]
    fn update_and_remove_change_placed_components() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut workspace = Workspace::new(&catalog, None, &data);
        workspace.execute(&call(
            "Heading",
            json!({"props": {"text": "A", "level": 1}}),
        ));
        let updated = workspace.execute(&call(
            UPDATE_COMPONENT,
            json!({"id": "c1", "props": {"text": "B", "level": 1}}),
        ));
        assert_eq!(updated.effect, Effect::Updated { id: "c1".into() });
        assert_eq!(workspace.tree.nodes["c1"].props["text"], "B");
        let removed = workspace.execute(&call(REMOVE_COMPONENT, json!({"id": "c1"})));
        assert_eq!(removed.content, json!({"removed": ["c1"]}));
        assert!(!workspace.check().ok);
    }
}
