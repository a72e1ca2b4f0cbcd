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
        description: "Checks the page as it is now: every schema field has the right component \
inside the Form, a submit button exists, bindings resolve. Returns {ok, errors, warnings}; each \
issue has a rule, a message and a fix. Warnings (labels, heading order, danger buttons) do not \
block but should be fixed."
            .to_owned(),
        parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
    });
    tools.push(ToolDefinition {
        name: REMOVE_COMPONENT.to_owned(),
        description: "Removes a placed component, and everything inside it when it is a layout."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "The id a component call returned, such as \"c4\"."}},
            "required": ["id"],
            "additionalProperties": false
        }),
    });
    tools.push(ToolDefinition {
        name: UPDATE_COMPONENT.to_owned(),
        description: "Replaces all props of a placed component (same rules as placing it); its \
place in the page stays."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The id a component call returned."},
                "props": {"type": "object", "description": "The complete new props."}
            },
            "required": ["id", "props"],
            "additionalProperties": false
        }),
    });
    tools.push(ToolDefinition {
        name: FINISH.to_owned(),
        description: "Call once the page is complete. The application validates the page; if \
something is still wrong you are told what, and you continue."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"summary": {"type": "string", "description": "One sentence on what the page does."}},
            "additionalProperties": false
        }),
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
