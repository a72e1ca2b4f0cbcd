//! The page tree: the nodes a model placed, how they nest, and the checks a tree must pass.
//!
//! The JSON shape is DESIGN.md §4: `{"nodes": {"c1": {"component", "props", "children"}},
//! "order": ["c1"]}`. A tree is plain data: it can be stored, re-rendered with new data and
//! rebuilt by tools, so nothing here assumes it is well formed. Walking a broken tree (cycles,
//! missing children, several parents) never panics or loops; [`PageTree::validate`] says what is
//! broken in words a model can act on.
//!
//! This module must not render anything; `render.rs` does, through the catalog.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use std::sync::Arc;

use crate::catalog::{Catalog, FieldYield, RowChoice};

mod bound;
mod edit;
mod validate;

pub use bound::{BoundData, NodeFacts};
pub use edit::{Placed, Subtree, SubtreeIssue};
pub use validate::TreeIssue;

/// One placed component.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The component's name in the catalog, for example `Heading`.
    pub component: String,
    /// The props as the model wrote them, bindings unresolved; missing means `{}`.
    #[serde(default = "empty_props")]
    pub props: Value,
    /// Ids of the child nodes, in display order (layout components only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<String>,
}

fn empty_props() -> Value {
    Value::Object(Map::new())
}

/// A page: nodes by id plus the top-level order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageTree {
    /// Every node by id.
    #[serde(default)]
    pub nodes: BTreeMap<String, Node>,
    /// Top-level nodes in display order. Nodes that are nobody's child and are not listed here are
    /// appended after these, in natural id order (`c2` before `c10`).
    #[serde(default)]
    pub order: Vec<String>,
}

/// A field as placed in a tree, with what it submits; input to the form checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedField {
    /// The node's id.
    pub node: String,
    /// The component's name.
    pub component: String,
    /// The form key it submits under.
    pub name: String,
    /// Its visible label.
    pub label: String,
    /// The JSON type it decodes to.
    pub yields: FieldYield,
    /// The closed set of values it can submit, if it has one.
    pub options: Option<Arc<[String]>>,
    /// Whether the component demands a value.
    pub required: bool,
    /// Whether a Form is among its ancestors (a field outside the Form is never submitted).
    pub inside_form: bool,
    /// The rows it shares one choice each with other fields (a `DecisionTable`'s arrays).
    pub row_choice: Option<Arc<RowChoice>>,
}

impl PageTree {
    /// Whether the page has a Cancel button (a Button of kind `cancel`): only then may a
    /// submission resolve it as cancelled.
    #[must_use]
    pub fn offers_cancel(&self) -> bool {
        self.nodes.values().any(|node| {
            node.component == "Button"
                && node.props.get("kind").and_then(Value::as_str) == Some("cancel")
        })
    }

    /// Whether the page places a decline Button itself (a Button of kind `decline`); otherwise
    /// the server's Form adds the Decline control on pages that take a Decline.
    #[must_use]
    pub fn offers_decline(&self) -> bool {
        self.nodes.values().any(|node| {
            node.component == "Button"
                && node.props.get("kind").and_then(Value::as_str) == Some("decline")
        })
    }

    /// Whether the tree has no nodes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The ids that are some node's child (existing or not), each once.
    fn child_ids(&self) -> BTreeSet<&str> {
        self.nodes
            .values()
            .flat_map(|node| node.children.iter().map(String::as_str))
            .collect()
    }

    /// The top-level node ids in display order: `order` first (existing, non-child, each once),
    /// then the remaining non-child nodes in natural id order.
    #[must_use]
    pub fn top_level(&self) -> Vec<&str> {
        let children = self.child_ids();
        let mut seen = BTreeSet::new();
        let mut top: Vec<&str> = Vec::new();
        for id in &self.order {
            if let Some((key, _)) = self.nodes.get_key_value(id) {
                if !children.contains(key.as_str()) && seen.insert(key.as_str()) {
                    top.push(key.as_str());
                }
            }
        }
        let mut rest: Vec<&str> = self
            .nodes
            .keys()
            .map(String::as_str)
            .filter(|id| !children.contains(id) && !seen.contains(id))
            .collect();
        rest.sort_by(|left, right| natural_cmp(left, right));
        top.extend(rest);
        top
    }

    /// Every reachable node id in document order (depth first from the top level), each once.
    /// Nodes only reachable through a cycle are not included.
    #[must_use]
    pub fn document_order(&self) -> Vec<&str> {
        let mut visited = BTreeSet::new();
        let mut ordered = Vec::new();
        let mut stack: Vec<&str> = self.top_level().into_iter().rev().collect();
        while let Some(id) = stack.pop() {
            let Some((key, node)) = self.nodes.get_key_value(id) else {
                continue;
            };
            if !visited.insert(key.as_str()) {
                continue;
            }
            ordered.push(key.as_str());
            for child in node.children.iter().rev() {
                if !visited.contains(child.as_str()) {
                    stack.push(child.as_str());
                }
            }
        }
        ordered
    }

    /// The page as text, as short as it can be read: one line per node in document order,
    /// `id Component {props}` (props as compact JSON, left out when empty), indented two spaces
    /// per level under its parent. What the model reads back with `GetPage`.
    #[must_use]
    pub fn outline(&self) -> String {
        let mut text = String::new();
        let mut visited = BTreeSet::new();
        let mut stack: Vec<(&str, usize)> = self
            .top_level()
            .into_iter()
            .rev()
            .map(|id| (id, 0))
            .collect();
        while let Some((id, depth)) = stack.pop() {
            let Some((key, node)) = self.nodes.get_key_value(id) else {
                continue;
            };
            if !visited.insert(key.as_str()) {
                continue;
            }
            text.push_str(&"  ".repeat(depth));
            text.push_str(key);
            text.push(' ');
            text.push_str(&node.component);
            if node.props.as_object().is_none_or(|props| !props.is_empty()) {
                text.push(' ');
                text.push_str(&node.props.to_string());
            }
            text.push('\n');
            for child in node.children.iter().rev() {
                stack.push((child.as_str(), depth + 1));
            }
        }
        text
    }

    /// The first node (in id order) that lists `id` as a child.
    #[must_use]
    pub fn parent_of(&self, id: &str) -> Option<&str> {
        self.nodes
            .iter()
            .find(|(_, node)| node.children.iter().any(|child| child == id))
            .map(|(parent, _)| parent.as_str())
    }

    /// The chain of ancestors of `id`, nearest first; stops at a repeat so cycles end.
    #[must_use]
    pub fn ancestors(&self, id: &str) -> Vec<&str> {
        let mut chain: Vec<&str> = Vec::new();
        let mut current = id;
        while let Some(parent) = self.parent_of(current) {
            if parent == id || chain.contains(&parent) {
                break;
            }
            chain.push(parent);
            current = parent;
        }
        chain
    }

    /// The fields placed in the tree, in document order, read from their props resolved against
    /// `data`. Nodes with unknown components or invalid props are skipped (validation reports them).
    #[must_use]
    pub fn fields(&self, catalog: &Catalog, data: &Value) -> Vec<PlacedField> {
        self.fields_bound(catalog, &BoundData::new(data))
    }

    /// [`Self::fields`] against `bound`, reusing what it already knows about unchanged nodes.
    #[must_use]
    pub fn fields_bound(&self, catalog: &Catalog, bound: &BoundData<'_>) -> Vec<PlacedField> {
        let mut fields = Vec::new();
        for (id, node, facts) in self.field_nodes(catalog, bound) {
            let inside_form = self.ancestors(id).iter().any(|ancestor| {
                self.nodes
                    .get(*ancestor)
                    .is_some_and(|parent| parent.component == "Form")
            });
            fields.extend(facts.fields.iter().map(|info| PlacedField {
                node: id.to_owned(),
                component: node.component.clone(),
                name: info.name.clone(),
                label: info.label.clone(),
                yields: info.yields,
                options: info.options.clone(),
                required: info.required,
                inside_form,
                row_choice: info.row_choice.clone(),
            }));
        }
        fields
    }

    /// Each node that submits something, in document order, with its facts; the submitted names
    /// without copying what else the fields hold (a selectable table's options are its row ids).
    fn field_nodes<'t>(
        &'t self,
        catalog: &Catalog,
        bound: &BoundData<'_>,
    ) -> Vec<(&'t str, &'t Node, Arc<NodeFacts>)> {
        let mut found = Vec::new();
        for id in self.document_order() {
            let Some(node) = self.nodes.get(id) else {
                continue;
            };
            let Some(spec) = catalog.get(&node.component).filter(|spec| spec.submits) else {
                continue;
            };
            let facts = bound.facts(spec, &node.props);
            if !facts.fields.is_empty() {
                found.push((id, node, facts));
            }
        }
        found
    }

    /// Checks the tree against the catalog and the page data; empty means valid.
    ///
    /// Rules (the `rule` code of each [`TreeIssue`]): `unknown_component`, `missing_child`,
    /// `unknown_order_entry`, `children_not_allowed`, `multiple_parents`, `cycle`,
    /// `invalid_props`, `unbound_data`, `duplicate_field_name`, `multiple_forms`.
    #[must_use]
    pub fn validate(&self, catalog: &Catalog, data: &Value) -> Vec<TreeIssue> {
        validate::validate(self, catalog, &BoundData::new(data))
    }

    /// [`Self::validate`] against `bound`, reusing what it already knows about unchanged nodes.
    #[must_use]
    pub fn validate_bound(&self, catalog: &Catalog, bound: &BoundData<'_>) -> Vec<TreeIssue> {
        validate::validate(self, catalog, bound)
    }
}

/// Orders ids like `c2` before `c10`: equal text prefixes compare by their numeric suffix.
fn natural_cmp(left: &str, right: &str) -> Ordering {
    fn split(id: &str) -> (&str, Option<u64>) {
        let digits_start = id
            .trim_end_matches(|character: char| character.is_ascii_digit())
            .len();
        let (prefix, digits) = id.split_at(digits_start);
        (prefix, digits.parse().ok())
    }
    let (left_prefix, left_number) = split(left);
    let (right_prefix, right_number) = split(right);
    left_prefix
        .cmp(right_prefix)
        .then(left_number.cmp(&right_number))
        .then(left.cmp(right))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tree(value: Value) -> Result<PageTree, serde_json::Error> {
        serde_json::from_value(value)
    }

    #[test]
    fn the_design_json_round_trips() -> Result<(), serde_json::Error> {
        let json = json!({
            "nodes": {
                "c1": {"component": "Heading", "props": {"text": "Hi", "level": 1}},
                "c3": {"component": "Form", "props": {}, "children": ["c4"]},
                "c4": {"component": "Button", "props": {"label": "Go"}}
            },
            "order": ["c1", "c3"]
        });
        let parsed = tree(json.clone())?;
        assert_eq!(serde_json::to_value(&parsed)?, json);
        Ok(())
    }

    #[test]
    fn children_and_props_may_be_omitted() -> Result<(), serde_json::Error> {
        let parsed = tree(json!({"nodes": {"c1": {"component": "Divider"}}}))?;
        assert_eq!(parsed.nodes["c1"].props, json!({}));
        assert!(parsed.nodes["c1"].children.is_empty());
        assert_eq!(parsed.top_level(), vec!["c1"]);
        Ok(())
    }

    #[test]
    fn unlisted_top_level_nodes_follow_the_order_in_natural_id_order(
    ) -> Result<(), serde_json::Error> {
        let parsed = tree(json!({
            "nodes": {
                "c1": {"component": "Divider"}, "c2": {"component": "Divider"},
                "c10": {"component": "Divider"}, "c3": {"component": "Card", "children": ["c1"]}
            },
            "order": ["c3", "c1", "missing"]
        }))?;
        assert_eq!(parsed.top_level(), vec!["c3", "c2", "c10"]);
        assert_eq!(parsed.document_order(), vec!["c3", "c1", "c2", "c10"]);
        Ok(())
    }

    #[test]
    fn walking_a_cyclic_tree_terminates() -> Result<(), serde_json::Error> {
        let parsed = tree(json!({
            "nodes": {
                "a": {"component": "Card", "children": ["b"]},
                "b": {"component": "Card", "children": ["a"]},
                "c": {"component": "Card", "children": ["c"]}
            }
        }))?;
        assert!(parsed.document_order().is_empty());
        assert_eq!(parsed.ancestors("a"), vec!["b"]);
        assert!(parsed.ancestors("c").is_empty());
        Ok(())
    }

    #[test]
    fn fields_are_listed_in_document_order_with_their_form_membership(
    ) -> Result<(), serde_json::Error> {
        let parsed = tree(json!({
            "nodes": {
                "f": {"component": "Form", "children": ["box"]},
                "box": {"component": "Container", "children": ["email"]},
                "email": {"component": "Input", "props": {"name": "email", "label": "Email", "type": "email", "required": true}},
                "agree": {"component": "Checkbox", "props": {"name": "agree", "label": "I agree"}},
                "pick": {"component": "Select", "props": {"name": "color", "label": "Colour",
                         "options": [{"value": "red", "label": "Red"}, "blue"]}}
            },
            "order": ["f", "agree"]
        }))?;
        let fields = parsed.fields(&Catalog::defaults(), &json!({}));
        let summary: Vec<(&str, &str, FieldYield, bool, bool)> = fields
            .iter()
            .map(|field| {
                (
                    field.node.as_str(),
                    field.name.as_str(),
                    field.yields,
                    field.required,
                    field.inside_form,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("email", "email", FieldYield::String, true, true),
                ("agree", "agree", FieldYield::Boolean, false, false),
                ("pick", "color", FieldYield::String, false, false),
            ]
        );
        assert_eq!(
            fields[2].options.as_deref(),
            Some(&["red".to_owned(), "blue".to_owned()][..])
        );
        Ok(())
    }

    #[test]
    fn a_selectable_table_is_a_field_with_its_row_ids_as_options() -> Result<(), serde_json::Error>
    {
        let parsed = tree(json!({
            "nodes": {"t": {"component": "Table", "props": {
                "columns": [{"key": "subject", "label": "Subject"}],
                "rows": {"$data": "/emails"},
                "selectable": {"name": "archive", "idKey": "id", "label": "Archive"}
            }}}
        }))?;
        let data = json!({"emails": [{"id": "m1", "subject": "A"}, {"id": 2, "subject": "B"}]});
        let fields = parsed.fields(&Catalog::defaults(), &data);
        assert_eq!(fields.len(), 1);
        assert_eq!(fields[0].yields, FieldYield::StringArray);
        assert_eq!(
            fields[0].options.as_deref(),
            Some(&["m1".to_owned(), "2".to_owned()][..])
        );
        Ok(())
    }

    #[test]
    fn the_outline_is_one_indented_line_per_node() -> Result<(), serde_json::Error> {
        let parsed = tree(json!({
            "nodes": {
                "c1": {"component": "Heading", "props": {"text": "Hi", "level": 1}},
                "c2": {"component": "Form", "children": ["c3", "c4"]},
                "c3": {"component": "Input", "props": {"name": "a", "label": "A"}},
                "c4": {"component": "Container", "children": ["c5"]},
                "c5": {"component": "Button", "props": {"label": "Go"}}
            },
            "order": ["c1", "c2"]
        }))?;
        assert_eq!(
            parsed.outline(),
            "c1 Heading {\"text\":\"Hi\",\"level\":1}\nc2 Form\n  c3 Input {\"name\":\"a\",\"label\":\"A\"}\n  c4 Container\n    c5 Button {\"label\":\"Go\"}\n"
        );
        assert_eq!(PageTree::default().outline(), "");
        Ok(())
    }
}
