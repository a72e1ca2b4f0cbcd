//! The tools a model builds a page with, and what code does when one is called.
//!
//! One tool per catalog component (its definition comes from the component's spec, DESIGN.md §3)
//! plus the loop's own: [`VALIDATE_FORM`], [`REMOVE_COMPONENT`], [`UPDATE_COMPONENT`],
//! [`MOVE_COMPONENT`], [`GET_PAGE`] and [`FINISH`]. [`Workspace::execute`] runs one call against
//! the page being built and answers the way the model can act on: `{"id": "c7"}` for a placed
//! component, or a tool error `{"error": {"rule", "message", "fix", …}}` naming what to change.
//! Nothing here talks to a model or the store; the loop (`generate/tool_loop.rs`) does.
//!
//! **Flat calls.** A component call's arguments are its props, plus an optional `"parent"` (a
//! layout's id; the system prompt says so once instead of every tool declaring it):
//! `Input {"name": "email", "label": "Email", "parent": "c2"}`. The older wrapper
//! `{"props": {…}, "parent"?, "children"?}` is read too, so recorded transcripts replay.
//!
//! **Whole subtrees in one call.** A layout's call may carry `children`:
//! `[{"component": "Input", "name": "email", …, "children": [...]}]` (or `{"component", "props"}`
//! nodes), nested as deep as needed, so a model places a Form with all its fields and buttons in
//! one turn instead of learning the Form's id first. Every node is checked exactly as if it were placed alone (props completed from the
//! schema, props validation, parent and Form rules, field names). The call is atomic: one refused
//! node and nothing of the call is placed; the error names the node by its path and component
//! (`"path": "children[2].children[0]", "component": "Input"`), so the model resends the same call
//! with that node fixed. Success answers every new id, nested like the call:
//! `{"id": "c3", "children": [{"id": "c4"}, {"id": "c5"}]}`. Ids stay code's.

use std::cell::RefCell;

use serde::Deserialize;
use serde_json::{json, Value};
use tessera_app::{
    catalog::Catalog,
    tree::{BoundData, PageTree, Subtree, SubtreeIssue, TreeIssue},
};

use crate::{
    forms::{
        validate_form::{validate_form_bound, FormReport},
        FieldKind, FormSchema,
    },
    llm::{ToolCall, ToolDefinition},
};

/// Checks the page and returns the `ValidateForm` report (errors and page-quality warnings).
pub const VALIDATE_FORM: &str = "ValidateForm";
/// Removes a placed component and everything inside it.
pub const REMOVE_COMPONENT: &str = "RemoveComponent";
/// Replaces the props of a placed component.
pub const UPDATE_COMPONENT: &str = "UpdateComponent";
/// Moves a placed component (with what is inside it) to another parent or position.
pub const MOVE_COMPONENT: &str = "MoveComponent";
/// Returns the page as placed so far, one line per node.
pub const GET_PAGE: &str = "GetPage";
/// Says the page is complete; code then checks it.
pub const FINISH: &str = "Finish";

/// The names of the loop's own tools, which no component may take.
pub const AGENT_TOOLS: [&str; 6] = [
    VALIDATE_FORM,
    REMOVE_COMPONENT,
    UPDATE_COMPONENT,
    MOVE_COMPONENT,
    GET_PAGE,
    FINISH,
];

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
        description: "Checks the page: {ok, errors, warnings}.".to_owned(),
        parameters: json!({"type": "object"}),
    });
    tools.push(ToolDefinition {
        name: REMOVE_COMPONENT.to_owned(),
        description: "Removes a component and what is inside it.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"]
        }),
    });
    tools.push(ToolDefinition {
        name: UPDATE_COMPONENT.to_owned(),
        description: "Replaces all props of a component; its place stays.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "props": {"type": "object"}},
            "required": ["id", "props"]
        }),
    });
    tools.push(ToolDefinition {
        name: MOVE_COMPONENT.to_owned(),
        description: "Moves a component and its children into `parent` (omit: top level) at \
`index` (omit: last)."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "parent": {"type": "string"},
                "index": {"type": "integer", "minimum": 0}
            },
            "required": ["id"]
        }),
    });
    tools.push(ToolDefinition {
        name: GET_PAGE.to_owned(),
        description: "The page so far, one `id Component props` line per node, indented."
            .to_owned(),
        parameters: json!({"type": "object"}),
    });
    tools.push(ToolDefinition {
        name: FINISH.to_owned(),
        description: "Call when the page is complete.".to_owned(),
        parameters: json!({"type": "object", "properties": {"summary": {"type": "string"}}}),
    });
    tools
}

/// What a call did, for the loop's bookkeeping and events.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// A component was placed with this id (with `inside` placed within it in the same call).
    Placed {
        /// The new node's id.
        id: String,
        /// Its component.
        component: String,
        /// The ids of the nodes its call placed inside it, depth first.
        inside: Vec<String>,
    },
    /// A component was moved.
    Moved {
        /// The node's id.
        id: String,
    },
    /// The model read the page back.
    Read,
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

    /// A refused subtree: the issue, plus the failing node's path and component when it is not
    /// the called component itself; the reply says nothing of the call was placed.
    fn from_subtree_issue(refused: SubtreeIssue) -> Self {
        let mut reply = Self::from_issue(refused.issue);
        if !refused.path.is_empty() {
            let error = &mut reply.content["error"];
            let message = error["message"].as_str().unwrap_or_default().to_owned();
            error["message"] = json!(format!(
                "{} ({}): {message} Nothing of this call was placed.",
                refused.path, refused.component
            ));
            error["path"] = json!(refused.path);
            error["component"] = json!(refused.component);
        }
        reply
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

/// A component call's arguments, read from either shape a model may send: the offered flat one,
/// the props themselves plus `"parent"` and (layouts) `"children"`, or the older wrapper
/// `{"props": {…}, "parent"?, "children"?}` that earlier transcripts use.
struct ComponentArgs {
    props: Value,
    parent: Option<String>,
    /// Raw nodes, read by [`Workspace::subtree`] so an error can name a node's path.
    children: Value,
}

impl ComponentArgs {
    fn read(component: &str, arguments: &Value) -> Result<Self, Box<Reply>> {
        let invalid = |error: &str| -> Box<Reply> {
            Box::new(Reply::refused(
                "invalid_arguments",
                &format!("The arguments of {component} do not fit its schema: {error}"),
                &format!(
                    "Call {component} again with its props as the arguments, e.g. \
                     {{\"label\": \"Email\", \"parent\": \"c2\"}} (parent optional)."
                ),
            ))
        };
        let Value::Object(mut fields) = lenient_props(arguments.clone()) else {
            return Err(invalid("they are not a JSON object"));
        };
        let parent = match fields.remove("parent") {
            None | Some(Value::Null) => None,
            Some(Value::String(parent)) => Some(parent),
            Some(_) => return Err(invalid("`parent` must be a layout's id, a string")),
        };
        let children = fields.remove("children").unwrap_or(Value::Null);
        Ok(Self {
            props: props_of(fields),
            parent,
            children,
        })
    }
}

/// A call's or node's props once `parent`, `children` and `component` are taken out: the
/// wrapper's `props` when that is all that is left, else the fields themselves (the flat shape).
fn props_of(mut fields: serde_json::Map<String, Value>) -> Value {
    if fields.len() == 1 {
        if let Some(props) = fields.remove("props") {
            return props;
        }
    }
    Value::Object(fields)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveArgs {
    id: String,
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    index: Option<usize>,
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
    /// The page data, with what each node placed so far was found to be against it: an edit
    /// works out only the node it touches, never every placed node and its bound rows again.
    bound: BoundData<'a>,
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
            bound: BoundData::new(data),
            checked: RefCell::new(None),
        }
    }

    /// The page data.
    #[must_use]
    pub fn data(&self) -> &'a Value {
        self.bound.data()
    }

    /// The props schema of `component` in the catalog the page is built from.
    #[must_use]
    pub fn props_schema_of(&self, component: &str) -> Option<&Value> {
        self.catalog.get(component).map(|spec| &spec.props_schema)
    }

    /// The role of `component` in the catalog the page is built from.
    #[must_use]
    pub fn role_of(&self, component: &str) -> Option<tessera_app::catalog::Role> {
        self.catalog.get(component).map(|spec| spec.role)
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
        let report = validate_form_bound(&self.tree, self.catalog, self.schema, &self.bound);
        *self.checked.borrow_mut() = Some((self.tree.clone(), report.clone()));
        report
    }

    /// `props` for `component` with what the schema says about its field and the model left
    /// out (input type, step, bounds, required, help, placeholder, default) filled in.
    fn completed(&self, component: &str, mut props: Value) -> Value {
        // A control inside an object or a record is named by its path (`address.city`).
        let field = self.schema.and_then(|schema| {
            props
                .get("name")
                .and_then(Value::as_str)
                .and_then(|name| super::structure::field_at(schema, name))
        });
        match (component, field) {
            ("RecordList", Some(list)) if matches!(list.kind, FieldKind::RecordList { .. }) => {
                return super::structure::complete_record_list(list, &props);
            }
            ("Fieldset", Some(object)) if matches!(object.kind, FieldKind::Object { .. }) => {
                if let Value::Object(given) = &mut props {
                    given.extend(super::structure::fieldset_props(object));
                }
                return props;
            }
            _ => {}
        }
        let is_field = self.catalog.get(component).is_some_and(|spec| spec.submits);
        if let (Some(field), true) = (field, is_field) {
            crate::forms::answerable::complete_props(component, &mut props, field);
        }
        props
    }

    /// The nodes of a component call, props completed from the schema like a single call's,
    /// or the refusal naming the first child that is not a `{component, props?, children?}`.
    fn subtree(
        &self,
        component: &str,
        props: Value,
        children: Value,
        path: &str,
    ) -> Result<Subtree, Box<Reply>> {
        let refused = |at: String, message: String| {
            let mut reply = Reply::refused(
                "invalid_children",
                &message,
                "Write each child as {\"component\": \"Input\", …its props} with an \
                 optional \"children\" array of the same shape.",
            );
            reply.content["error"]["path"] = json!(at);
            Box::new(reply)
        };
        let children = match lenient_props(children) {
            Value::Object(empty) if empty.is_empty() => Vec::new(),
            Value::Array(children) => children,
            _ => {
                return Err(refused(
                    path.to_owned(),
                    format!("`children` of {} must be an array.", at(path, component)),
                ))
            }
        };
        let mut nodes = Vec::with_capacity(children.len());
        for (index, child) in children.into_iter().enumerate() {
            let child_path = if path.is_empty() {
                format!("children[{index}]")
            } else {
                format!("{path}.children[{index}]")
            };
            let Value::Object(mut fields) = lenient_props(child) else {
                return Err(refused(
                    child_path.clone(),
                    format!("{child_path} is not an object."),
                ));
            };
            let Some(Value::String(name)) = fields.remove("component") else {
                return Err(refused(
                    child_path.clone(),
                    format!("{child_path} has no \"component\" name."),
                ));
            };
            let grandchildren = fields.remove("children").unwrap_or(Value::Null);
            // Flat (`{"component", …props}`) or the wrapper (`{"component", "props"}`).
            let child_props = props_of(fields);
            nodes.push(self.subtree(&name, child_props, grandchildren, &child_path)?);
        }
        Ok(Subtree {
            props: self.completed(component, lenient_props(props)),
            component: component.to_owned(),
            children: nodes,
        })
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
        let outcome = match call.name.as_str() {
            VALIDATE_FORM => {
                let report = self.check();
                let content = serde_json::to_value(&report).unwrap_or(Value::Null);
                Ok(Reply::ok(content, Effect::Validated(report)))
            }
            FINISH => Ok(Reply::ok(json!({"received": true}), Effect::Finish)),
            GET_PAGE => {
                let outline = self.tree.outline();
                let content = if outline.is_empty() {
                    "(nothing placed yet)".to_owned()
                } else {
                    outline
                };
                Ok(Reply::ok(Value::String(content), Effect::Read))
            }
            MOVE_COMPONENT => {
                parse(MOVE_COMPONENT, arguments).map(|args| self.move_component(args))
            }
            REMOVE_COMPONENT => {
                parse(REMOVE_COMPONENT, arguments).map(|args| self.remove_component(&args))
            }
            UPDATE_COMPONENT => {
                parse(UPDATE_COMPONENT, arguments).map(|args| self.update_component(args))
            }
            component if self.catalog.get(component).is_some() => {
                self.place_component(component, arguments)
            }
            unknown => Ok(self.unknown_tool(unknown)),
        };
        outcome.unwrap_or_else(|refused| *refused)
    }

    fn move_component(&mut self, args: MoveArgs) -> Reply {
        let parent = args.parent.as_deref().filter(|parent| !parent.is_empty());
        match self
            .tree
            .move_node(self.catalog, &args.id, parent, args.index)
        {
            Ok(index) => Reply::ok(
                json!({"id": args.id, "parent": parent, "index": index}),
                Effect::Moved { id: args.id },
            ),
            Err(issue) => Reply::from_issue(issue),
        }
    }

    fn remove_component(&mut self, args: &RemoveArgs) -> Reply {
        match self.tree.remove(&args.id) {
            Ok(ids) => Reply::ok(json!({"removed": ids}), Effect::Removed { ids }),
            Err(issue) => Reply::from_issue(issue),
        }
    }

    fn update_component(&mut self, args: UpdateArgs) -> Reply {
        let component = self
            .tree
            .nodes
            .get(&args.id)
            .map(|node| node.component.clone())
            .unwrap_or_default();
        let props = self.completed(&component, lenient_props(args.props));
        match self
            .tree
            .update_bound(self.catalog, &self.bound, &args.id, props)
        {
            Ok(()) => Reply::ok(
                json!({"id": args.id, "updated": true}),
                Effect::Updated { id: args.id },
            ),
            Err(issue) => Reply::from_issue(issue),
        }
    }

    /// A component tool's call: the component (with the children it nests) placed whole.
    fn place_component(&mut self, component: &str, arguments: &Value) -> Result<Reply, Box<Reply>> {
        let args = ComponentArgs::read(component, arguments)?;
        let subtree = self.subtree(component, args.props, args.children, "")?;
        let parent = args.parent.as_deref().filter(|parent| !parent.is_empty());
        Ok(
            match self
                .tree
                .add_subtree_bound(self.catalog, &self.bound, &subtree, parent)
            {
                Ok(placed) => Reply::ok(
                    serde_json::to_value(&placed).unwrap_or(Value::Null),
                    Effect::Placed {
                        inside: placed.inside(),
                        id: placed.id,
                        component: component.to_owned(),
                    },
                ),
                Err(refused) => Reply::from_subtree_issue(*refused),
            },
        )
    }

    fn unknown_tool(&self, unknown: &str) -> Reply {
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

/// `path` and the component at it, for messages: the called component itself when `path` is empty.
fn at(path: &str, component: &str) -> String {
    if path.is_empty() {
        format!("the {component}")
    } else {
        format!("{path} ({component})")
    }
}

/// Reads a tool's arguments into its typed input, or answers with what is wrong.
fn parse<T: serde::de::DeserializeOwned>(tool: &str, arguments: &Value) -> Result<T, Box<Reply>> {
    T::deserialize(arguments).map_err(|error| {
        let shape = match tool {
            UPDATE_COMPONENT => "{\"id\": \"c3\", \"props\": {…}}",
            MOVE_COMPONENT => {
                "{\"id\": \"c3\", \"parent\": \"c2\", \"index\": 0} (parent, index optional)"
            }
            _ => "{\"id\": \"c3\"}",
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
    fn every_component_and_the_agent_tools_are_offered() {
        let catalog = Catalog::defaults();
        let tools = tool_definitions(&catalog);
        assert_eq!(tools.len(), catalog.specs().len() + AGENT_TOOLS.len());
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

    /// The most bytes the offer for the default catalog may take: issue 13's 12 KB (BENCHMARKS.md,
    /// "Prompt size per turn"). Additions — another tool, a prop on every tool — must fit here or
    /// pay for themselves.
    const OFFER_BUDGET: usize = 12_000;

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

    /// The props schema a tool offers (its parameters without a layout's `children`), compiled.
    fn offered_props(tool: &ToolDefinition) -> (Value, jsonschema::Validator) {
        let mut schema = tool.parameters.clone();
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.remove("children");
        }
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
                "emails": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "comment": {"type": "string", "description": "Why.", "examples": ["Late"]},
                "address": {"type": "object", "description": "Where.",
                            "properties": {"city": {"type": "string"}}},
                "lines": {"type": "array", "description": "What.", "minItems": 1, "maxItems": 3,
                          "items": {"type": "object", "properties": {"sku": {"type": "string"}}}}
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
                let derived = schema.fields.iter().any(|field| {
                    schema_props(&spec.name, field).contains_key(&prop)
                        || crate::agent::structure::derived_props(&spec.name, field)
                            .contains_key(&prop)
                });
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
        let bad_parent = workspace.execute(&call("Heading", json!({"text": "Hi", "parent": 5})));
        assert_eq!(bad_parent.content["error"]["rule"], "invalid_arguments");
        let not_an_object = workspace.execute(&call("Heading", json!(["Hi"])));
        assert_eq!(not_an_object.content["error"]["rule"], "invalid_arguments");
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

    fn contact_schema() -> FormSchema {
        FormSchema::new(vec![
            FormField::new("email", FieldKind::string()),
            FormField::new("age", FieldKind::integer()),
            FormField::new("news", FieldKind::Boolean),
        ])
    }

    #[test]
    fn a_whole_form_is_placed_in_one_call_and_every_id_is_answered() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let schema = contact_schema();
        let mut workspace = Workspace::new(&catalog, Some(&schema), &data);
        let placed = workspace.execute(&call(
            "Form",
            json!({"props": {}, "children": [
                {"component": "Input", "props": {"name": "email", "label": "Email"}},
                {"component": "Input", "props": {"name": "age", "label": "Age"}},
                {"component": "Checkbox", "props": {"name": "news", "label": "News"}},
                {"component": "Container", "props": {"direction": "row"}, "children": [
                    {"component": "Button", "props": {"label": "Send"}},
                    {"component": "Button", "props": {"label": "Cancel", "kind": "cancel"}}
                ]}
            ]}),
        ));
        assert_eq!(
            placed.content,
            json!({"id": "c1", "children": [{"id": "c2"}, {"id": "c3"}, {"id": "c4"},
                   {"id": "c5", "children": [{"id": "c6"}, {"id": "c7"}]}]})
        );
        assert_eq!(
            placed.effect,
            Effect::Placed {
                id: "c1".into(),
                component: "Form".into(),
                inside: ["c2", "c3", "c4", "c5", "c6", "c7"]
                    .map(String::from)
                    .to_vec(),
            }
        );
        // Children get their props completed from the schema like a single call's.
        assert_eq!(workspace.tree.nodes["c3"].props["type"], "number");
        assert_eq!(workspace.tree.nodes["c2"].props["required"], true);
        let report = workspace.check();
        assert!(report.ok, "{:?}", report.errors);
    }

    #[test]
    fn one_bad_child_refuses_the_call_with_its_path_and_places_nothing() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let schema = contact_schema();
        let mut workspace = Workspace::new(&catalog, Some(&schema), &data);
        workspace.execute(&call(
            "Heading",
            json!({"props": {"text": "Hi", "level": 1}}),
        ));
        let before = workspace.tree.clone();
        let refused = workspace.execute(&call(
            "Form",
            json!({"props": {}, "children": [
                {"component": "Input", "props": {"name": "email", "label": "Email"}},
                {"component": "Card", "props": {}, "children": [
                    {"component": "Select", "props": {"name": "age", "label": "Age", "options": "many"}}
                ]},
                {"component": "Button", "props": {"label": "Send"}}
            ]}),
        ));
        assert!(refused.is_error);
        let error = &refused.content["error"];
        assert_eq!(error["rule"], "invalid_props");
        assert_eq!(error["path"], "children[1].children[0]");
        assert_eq!(error["component"], "Select");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("children[1].children[0] (Select): Invalid props for Select"),
            "{message}"
        );
        assert!(
            message.ends_with("Nothing of this call was placed."),
            "{message}"
        );
        assert_eq!(workspace.tree, before, "the call is atomic");
    }

    #[test]
    fn children_that_are_not_nodes_are_refused_with_their_path() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut workspace = Workspace::new(&catalog, None, &data);
        let refusal = |workspace: &mut Workspace<'_>, children: Value| {
            let reply =
                workspace.execute(&call("Card", json!({"props": {}, "children": children})));
            (
                reply.content["error"]["rule"].clone(),
                reply.content["error"]["path"].clone(),
            )
        };
        assert_eq!(
            refusal(
                &mut workspace,
                json!([{"component": "Text", "props": {"text": "a"}}, {"props": {}}])
            ),
            (json!("invalid_children"), json!("children[1]"))
        );
        assert_eq!(
            refusal(
                &mut workspace,
                json!([{"component": "Card", "children": [{"text": "a"}]}])
            ),
            (json!("invalid_children"), json!("children[0].children[0]"))
        );
        assert_eq!(
            refusal(
                &mut workspace,
                json!([{"component": "Marquee", "props": {}}])
            ),
            (json!("unknown_component"), json!("children[0]"))
        );
        let text = workspace.execute(&call(
            "Text",
            json!({"props": {"text": "a"}, "children": [{"component": "Divider"}]}),
        ));
        assert_eq!(text.content["error"]["rule"], "children_not_allowed");
        assert!(workspace.tree.is_empty());
    }

    #[test]
    fn a_flat_call_and_a_wrapper_call_place_the_same_node() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let schema = contact_schema();
        let place = |arguments: Value| {
            let mut workspace = Workspace::new(&catalog, Some(&schema), &data);
            let reply = workspace.execute(&call("Input", arguments));
            assert_eq!(reply.content, json!({"id": "c1"}), "{}", reply.content);
            workspace.tree
        };
        let flat = place(json!({"name": "email", "label": "Email", "placeholder": "you@home"}));
        let wrapper =
            place(json!({"props": {"name": "email", "label": "Email", "placeholder": "you@home"}}));
        assert_eq!(flat, wrapper);
        assert_eq!(flat.nodes["c1"].props["placeholder"], "you@home");
        assert_eq!(flat.nodes["c1"].props["required"], true, "completed alike");
    }

    #[test]
    fn flat_and_wrapper_child_nodes_are_placed_alike_in_one_call() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let schema = contact_schema();
        let place = |children: Value| {
            let mut workspace = Workspace::new(&catalog, Some(&schema), &data);
            let reply = workspace.execute(&call("Form", json!({"children": children})));
            assert!(!reply.is_error, "{}", reply.content);
            workspace.tree
        };
        let flat = place(json!([
            {"component": "Input", "name": "email", "label": "Email"},
            {"component": "Container", "direction": "row", "children": [
                {"component": "Button", "label": "Send"}
            ]}
        ]));
        let wrapper = place(json!([
            {"component": "Input", "props": {"name": "email", "label": "Email"}},
            {"component": "Container", "props": {"direction": "row"}, "children": [
                {"component": "Button", "props": {"label": "Send"}}
            ]}
        ]));
        assert_eq!(flat, wrapper);
        assert_eq!(flat.nodes["c3"].props["direction"], "row");
        assert_eq!(flat.nodes["c4"].props["label"], "Send");
        // The two shapes may be mixed in one call, node by node.
        let mixed = place(json!([
            {"component": "Input", "name": "email", "label": "Email"},
            {"component": "Container", "props": {"direction": "row"}, "children": [
                {"component": "Button", "label": "Send"}
            ]}
        ]));
        assert_eq!(mixed, flat);
    }

    #[test]
    fn a_flat_call_with_a_parent_lands_in_that_layout() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let schema = contact_schema();
        let mut workspace = Workspace::new(&catalog, Some(&schema), &data);
        workspace.execute(&call("Form", json!({})));
        workspace.execute(&call("Card", json!({"title": "Contact"})));
        let input = workspace.execute(&call(
            "Input",
            json!({"name": "email", "label": "Email", "parent": "c1"}),
        ));
        assert_eq!(input.content, json!({"id": "c3"}));
        assert_eq!(workspace.tree.nodes["c1"].children, vec!["c3"]);
        assert!(workspace.tree.nodes["c2"].children.is_empty());
        assert!(
            workspace.tree.nodes["c3"].props.get("parent").is_none(),
            "`parent` is where the node goes, not a prop"
        );
        let misplaced = workspace.execute(&call(
            "Input",
            json!({"name": "age", "label": "Age", "parent": "c9"}),
        ));
        assert_eq!(misplaced.content["error"]["rule"], "unknown_parent");
    }

    #[test]
    fn a_field_placed_outside_the_form_is_moved_in_as_validate_form_says() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let schema = FormSchema::new(vec![FormField::new("email", FieldKind::string())]);
        let mut workspace = Workspace::new(&catalog, Some(&schema), &data);
        workspace.execute(&call(
            "Form",
            json!({"props": {}, "children": [{"component": "Button", "props": {"label": "Send"}}]}),
        ));
        workspace.execute(&call(
            "Input",
            json!({"props": {"name": "email", "label": "Email"}}),
        ));
        let report = workspace.check();
        let outside = report
            .errors
            .iter()
            .find(|issue| issue.rule == "field_outside_form");
        assert_eq!(
            outside.map(|issue| issue.fix.as_str()),
            Some("move it into the Form: call MoveComponent with {\"id\": \"c3\", \"parent\": \"c1\"}")
        );
        let moved = workspace.execute(&call(
            MOVE_COMPONENT,
            json!({"id": "c3", "parent": "c1", "index": 0}),
        ));
        assert_eq!(
            moved.content,
            json!({"id": "c3", "parent": "c1", "index": 0})
        );
        assert_eq!(workspace.tree.nodes["c1"].children, vec!["c3", "c2"]);
        let report = workspace.execute(&call(VALIDATE_FORM, json!({})));
        assert_eq!(report.content["ok"], json!(true), "{}", report.content);
    }

    #[test]
    fn moves_into_a_non_layout_into_itself_or_of_unknown_ids_are_refused() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut workspace = Workspace::new(&catalog, None, &data);
        workspace.execute(&call(
            "Card",
            json!({"props": {}, "children": [{"component": "Container", "props": {}},
                                             {"component": "Text", "props": {"text": "x"}}]}),
        ));
        let before = workspace.tree.clone();
        let mut rule = |arguments: Value| {
            workspace.execute(&call(MOVE_COMPONENT, arguments)).content["error"]["rule"].clone()
        };
        assert_eq!(rule(json!({"id": "c1", "parent": "c2"})), "cycle");
        assert_eq!(
            rule(json!({"id": "c2", "parent": "c3"})),
            "parent_not_layout"
        );
        assert_eq!(rule(json!({"id": "c9"})), "unknown_node");
        assert_eq!(rule(json!({"id": "c3", "parent": "c9"})), "unknown_parent");
        assert_eq!(rule(json!({"id": "c3", "index": -1})), "invalid_arguments");
        assert_eq!(workspace.tree, before);
    }

    #[test]
    fn get_page_reads_the_page_back_after_edits() {
        let catalog = Catalog::defaults();
        let data = json!({"rows": [{"id": 1}]});
        let mut workspace = Workspace::new(&catalog, None, &data);
        let empty = workspace.execute(&call(GET_PAGE, json!({})));
        assert_eq!(empty.content, json!("(nothing placed yet)"));
        workspace.execute(&call(
            "Heading",
            json!({"props": {"text": "Rows", "level": 1}}),
        ));
        workspace.execute(&call(
            "Card",
            json!({"props": {}, "children": [{"component": "Table", "props": {"rows": {"$data": "/rows"}}},
                                             {"component": "Divider"}]}),
        ));
        workspace.execute(&call(
            UPDATE_COMPONENT,
            json!({"id": "c1", "props": {"text": "All rows", "level": 1}}),
        ));
        workspace.execute(&call(MOVE_COMPONENT, json!({"id": "c3", "index": 0})));
        workspace.execute(&call(REMOVE_COMPONENT, json!({"id": "c4"})));
        let page = workspace.execute(&call(GET_PAGE, json!({})));
        assert_eq!(page.effect, Effect::Read);
        assert_eq!(
            page.content,
            json!("c3 Table {\"rows\":{\"$data\":\"/rows\"}}\nc1 Heading {\"text\":\"All rows\",\"level\":1}\nc2 Card\n")
        );
    }

    #[test]
    fn the_subtree_tools_add_little_to_every_turn() {
        let catalog = Catalog::defaults();
        let tools = tool_definitions(&catalog);
        let size = |value: &Value| value.to_string().len();
        let new_tools: usize = tools
            .iter()
            .filter(|tool| tool.name == MOVE_COMPONENT || tool.name == GET_PAGE)
            .map(|tool| tool.name.len() + tool.description.len() + size(&tool.parameters))
            .sum();
        let children: usize = catalog
            .tool_definitions()
            .iter()
            .map(|tool| size(&tool["parameters"]["properties"]["children"]))
            .filter(|bytes| *bytes > 4)
            .sum();
        // Sent with every model turn: keep `children`, MoveComponent and GetPage together
        // under 1.2 KB (the system prompt explains the rest once).
        assert!(
            new_tools + children <= 1_200,
            "{new_tools} bytes of new tools, {children} of `children`"
        );
    }
}
