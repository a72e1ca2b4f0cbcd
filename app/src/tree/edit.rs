//! Edits the agent loop's tools make to a tree: add (one component or a whole subtree), update,
//! move and remove a component.
//!
//! Each edit checks what it can check locally (the component exists, the parent is a layout, the
//! props are valid against the data, the field name is free, there is one Form, a move makes no
//! cycle) and refuses with a [`TreeIssue`] the model can act on, leaving the tree unchanged.
//! Whole-tree checks stay in [`PageTree::validate`].
//!
//! **A subtree is placed whole or not at all.** [`PageTree::add_subtree`] places its nodes one by
//! one, depth first, each checked exactly as if it were placed alone under its parent; the first
//! refusal undoes the whole call and names the failing node by its path in the call
//! (`children[2].children[0]`). Atomic rather than "keep what passed", because a half-built Form
//! is worse than none: the model would have to read back which children exist before it could
//! retry, while after a refusal it simply sends the same call with one node fixed.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::{BoundData, Node, PageTree, TreeIssue};
use crate::catalog::{Catalog, Role};

fn refuse(node: Option<&str>, rule: &'static str, message: String, fix: String) -> TreeIssue {
    TreeIssue {
        node: node.map(str::to_owned),
        field: None,
        rule,
        message,
        fix,
    }
}

/// A component to place together with the components inside it, as one tool call writes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Subtree {
    /// The component's name in the catalog.
    pub component: String,
    /// Its props, bindings unresolved.
    pub props: Value,
    /// What to place inside it, in display order (layouts only).
    pub children: Vec<Subtree>,
}

/// The ids code gave a placed subtree, nested as the call nested its nodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Placed {
    /// The node's new id.
    pub id: String,
    /// Its placed children, in order; absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Placed>,
}

impl Placed {
    /// Every id placed inside this node (not its own), depth first.
    #[must_use]
    pub fn inside(&self) -> Vec<String> {
        let mut ids = Vec::new();
        for child in &self.children {
            ids.push(child.id.clone());
            ids.extend(child.inside());
        }
        ids
    }
}

/// Why a subtree was refused: which of its nodes, and the issue as if it had been placed alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubtreeIssue {
    /// The failing node's path in the call: empty for the called component itself,
    /// `children[2]`, `children[2].children[0]` for the nodes inside it.
    pub path: String,
    /// The failing node's component.
    pub component: String,
    /// The refusal.
    pub issue: TreeIssue,
}

/// Whether `component` is a layout, which may hold children.
fn is_layout(catalog: &Catalog, component: &str) -> bool {
    catalog
        .get(component)
        .is_some_and(|spec| spec.role == Role::Layout)
}

impl PageTree {
    /// The next free id of the form `c<n>`, one above the highest number in use.
    #[must_use]
    pub fn next_id(&self) -> String {
        let highest = self
            .nodes
            .keys()
            .filter_map(|id| {
                id.strip_prefix('c')
                    .and_then(|number| number.parse::<u64>().ok())
            })
            .max()
            .unwrap_or(0);
        format!("c{}", highest + 1)
    }

    /// Places a component, as the last child of `parent` or at the end of the top level, and
    /// returns its new id.
    ///
    /// # Errors
    ///
    /// `unknown_component`, `unknown_parent`, `parent_not_layout`, `invalid_props`,
    /// `unbound_data`, `duplicate_field_name` or `multiple_forms`; the tree is unchanged.
    pub fn add(
        &mut self,
        catalog: &Catalog,
        data: &Value,
        component: &str,
        props: Value,
        parent: Option<&str>,
    ) -> Result<String, TreeIssue> {
        self.add_bound(catalog, &BoundData::new(data), component, props, parent)
    }

    /// [`Self::add`] against `bound`: only the new node is worked out against the data.
    ///
    /// # Errors
    ///
    /// As [`Self::add`].
    pub fn add_bound(
        &mut self,
        catalog: &Catalog,
        bound: &BoundData<'_>,
        component: &str,
        props: Value,
        parent: Option<&str>,
    ) -> Result<String, TreeIssue> {
        if let Some(parent_id) = parent {
            self.check_parent(catalog, parent_id, &format!("place the {component} in"))?;
        }
        if component == "Form" && self.nodes.values().any(|node| node.component == "Form") {
            return Err(refuse(
                None,
                "multiple_forms",
                "The page already has a Form; a page has at most one.".to_owned(),
                "Place fields and buttons in the existing Form.".to_owned(),
            ));
        }
        let id = self.next_id();
        self.check_node(catalog, bound, &id, component, &props)?;
        self.nodes.insert(
            id.clone(),
            Node {
                component: component.to_owned(),
                props,
                children: Vec::new(),
            },
        );
        match parent.and_then(|parent_id| self.nodes.get_mut(parent_id)) {
            Some(parent_node) => parent_node.children.push(id.clone()),
            None => self.order.push(id.clone()),
        }
        Ok(id)
    }

    /// Replaces the props of node `id`.
    ///
    /// # Errors
    ///
    /// `unknown_node`, `unknown_component`, `invalid_props`, `unbound_data` or
    /// `duplicate_field_name`; the tree is unchanged.
    pub fn update(
        &mut self,
        catalog: &Catalog,
        data: &Value,
        id: &str,
        props: Value,
    ) -> Result<(), TreeIssue> {
        self.update_bound(catalog, &BoundData::new(data), id, props)
    }

    /// [`Self::update`] against `bound`: only the updated node is worked out against the data.
    ///
    /// # Errors
    ///
    /// As [`Self::update`].
    pub fn update_bound(
        &mut self,
        catalog: &Catalog,
        bound: &BoundData<'_>,
        id: &str,
        props: Value,
    ) -> Result<(), TreeIssue> {
        let Some(component) = self.nodes.get(id).map(|node| node.component.clone()) else {
            return Err(self.unknown_node(id));
        };
        self.check_node(catalog, bound, id, &component, &props)?;
        if let Some(node) = self.nodes.get_mut(id) {
            node.props = props;
        }
        Ok(())
    }

    /// Removes node `id` and everything inside it; returns the removed ids.
    ///
    /// # Errors
    ///
    /// `unknown_node` when there is no such node.
    pub fn remove(&mut self, id: &str) -> Result<Vec<String>, TreeIssue> {
        if !self.nodes.contains_key(id) {
            return Err(self.unknown_node(id));
        }
        let mut doomed: BTreeSet<String> = BTreeSet::new();
        let mut stack = vec![id.to_owned()];
        while let Some(next) = stack.pop() {
            if doomed.insert(next.clone()) {
                if let Some(node) = self.nodes.get(&next) {
                    stack.extend(node.children.iter().cloned());
                }
            }
        }
        for gone in &doomed {
            self.nodes.remove(gone);
        }
        for node in self.nodes.values_mut() {
            node.children.retain(|child| !doomed.contains(child));
        }
        self.order.retain(|entry| !doomed.contains(entry));
        Ok(doomed.into_iter().collect())
    }

    /// Places `subtree` as the last child of `parent` (or at the end of the top level), its own
    /// children inside it, depth first; returns every new id, nested like the call.
    ///
    /// # Errors
    ///
    /// The first node refused, by its path: any refusal of [`PageTree::add`] for that node, or
    /// `children_not_allowed` when a node that is not a layout is given children. The tree is
    /// then exactly as before the call (nothing of the subtree stays).
    pub fn add_subtree(
        &mut self,
        catalog: &Catalog,
        data: &Value,
        subtree: &Subtree,
        parent: Option<&str>,
    ) -> Result<Placed, Box<SubtreeIssue>> {
        self.add_subtree_bound(catalog, &BoundData::new(data), subtree, parent)
    }

    /// [`Self::add_subtree`] against `bound`: only the new nodes are worked out against the data.
    ///
    /// # Errors
    ///
    /// As [`Self::add_subtree`].
    pub fn add_subtree_bound(
        &mut self,
        catalog: &Catalog,
        bound: &BoundData<'_>,
        subtree: &Subtree,
        parent: Option<&str>,
    ) -> Result<Placed, Box<SubtreeIssue>> {
        let before = (!subtree.children.is_empty()).then(|| self.clone());
        let mut placed = Vec::new();
        let result = self.place(catalog, bound, subtree, parent, "", &mut placed);
        result.map_err(|mut refused| {
            if let Some(before) = before {
                *self = before;
            }
            // The nodes this call placed are gone again: name them by their paths, not by ids
            // the model never saw.
            for (id, path) in &placed {
                let name = if path.is_empty() {
                    format!("the {}", subtree.component)
                } else {
                    path.clone()
                };
                let quoted = format!("\"{id}\"");
                refused.issue.message = refused.issue.message.replace(&quoted, &name);
                refused.issue.fix = refused.issue.fix.replace(&quoted, &name);
            }
            if refused
                .issue
                .node
                .as_ref()
                .is_some_and(|node| !self.nodes.contains_key(node))
            {
                refused.issue.node = None;
            }
            refused
        })
    }

    fn place(
        &mut self,
        catalog: &Catalog,
        bound: &BoundData<'_>,
        subtree: &Subtree,
        parent: Option<&str>,
        path: &str,
        placed: &mut Vec<(String, String)>,
    ) -> Result<Placed, Box<SubtreeIssue>> {
        let refused = |issue| {
            Box::new(SubtreeIssue {
                path: path.to_owned(),
                component: subtree.component.clone(),
                issue,
            })
        };
        if !subtree.children.is_empty()
            && catalog.get(&subtree.component).is_some()
            && !is_layout(catalog, &subtree.component)
        {
            return Err(refused(refuse(
                None,
                "children_not_allowed",
                format!("A {} cannot hold children.", subtree.component),
                "Give `children` only to a Form, Container, Card or Details; place the others \
                 next to it."
                    .to_owned(),
            )));
        }
        let id = self
            .add_bound(
                catalog,
                bound,
                &subtree.component,
                subtree.props.clone(),
                parent,
            )
            .map_err(refused)?;
        placed.push((id.clone(), path.to_owned()));
        let mut children = Vec::with_capacity(subtree.children.len());
        for (index, child) in subtree.children.iter().enumerate() {
            let child_path = if path.is_empty() {
                format!("children[{index}]")
            } else {
                format!("{path}.children[{index}]")
            };
            children.push(self.place(catalog, bound, child, Some(&id), &child_path, placed)?);
        }
        Ok(Placed { id, children })
    }

    /// Moves node `id`, with everything inside it, to position `index` among the children of
    /// `parent` (or of the top level); an index past the end, or none, means last. Returns the
    /// position it ended at.
    ///
    /// # Errors
    ///
    /// `unknown_node`, `unknown_parent`, `parent_not_layout`, or `cycle` when `parent` is the node
    /// itself or inside it; the tree is unchanged.
    pub fn move_node(
        &mut self,
        catalog: &Catalog,
        id: &str,
        parent: Option<&str>,
        index: Option<usize>,
    ) -> Result<usize, TreeIssue> {
        let Some(component) = self.nodes.get(id).map(|node| node.component.clone()) else {
            return Err(self.unknown_node(id));
        };
        if let Some(parent_id) = parent {
            self.check_parent(catalog, parent_id, &format!("move the {component} into"))?;
            if parent_id == id || self.ancestors(parent_id).contains(&id) {
                return Err(refuse(
                    Some(id),
                    "cycle",
                    format!("Node \"{parent_id}\" is \"{id}\" or inside it; a node cannot be moved into itself."),
                    format!("Choose a `parent` outside \"{id}\"."),
                ));
            }
        }
        for node in self.nodes.values_mut() {
            node.children.retain(|child| child != id);
        }
        self.order.retain(|entry| entry != id);
        if parent.is_none() {
            // The top level's display order includes nodes `order` does not list; write it out
            // so the index counts what the page shows.
            self.order = self
                .top_level()
                .into_iter()
                .filter(|top| *top != id)
                .map(str::to_owned)
                .collect();
        }
        let siblings = match parent.and_then(|parent_id| self.nodes.get_mut(parent_id)) {
            Some(parent_node) => &mut parent_node.children,
            None => &mut self.order,
        };
        let position = index.unwrap_or(usize::MAX).min(siblings.len());
        siblings.insert(position, id.to_owned());
        Ok(position)
    }

    /// Refuses a `parent` that is not a placed layout node; `purpose` finishes the sentence
    /// "There is no node … to …".
    fn check_parent(
        &self,
        catalog: &Catalog,
        parent_id: &str,
        purpose: &str,
    ) -> Result<(), TreeIssue> {
        let Some(parent_node) = self.nodes.get(parent_id) else {
            return Err(refuse(
                Some(parent_id),
                "unknown_parent",
                format!("There is no node \"{parent_id}\" to {purpose}."),
                "Use an id returned by an earlier call, or omit `parent` for the top level."
                    .to_owned(),
            ));
        };
        if is_layout(catalog, &parent_node.component) {
            return Ok(());
        }
        Err(refuse(
            Some(parent_id),
            "parent_not_layout",
            format!(
                "Node \"{parent_id}\" is a {}, which cannot hold children.",
                parent_node.component
            ),
            "Use the id of a Form, Container, Card or Details as `parent`.".to_owned(),
        ))
    }

    fn unknown_node(&self, id: &str) -> TreeIssue {
        let known: Vec<&str> = self.nodes.keys().map(String::as_str).collect();
        refuse(
            Some(id),
            "unknown_node",
            format!("There is no node \"{id}\"."),
            format!("Use one of the placed ids: {}.", known.join(", ")),
        )
    }

    /// The checks shared by `add` and `update` for one node's component and props.
    fn check_node(
        &self,
        catalog: &Catalog,
        bound: &BoundData<'_>,
        id: &str,
        component: &str,
        props: &Value,
    ) -> Result<(), TreeIssue> {
        let Some(spec) = catalog.get(component) else {
            let known: Vec<&str> = catalog
                .specs()
                .iter()
                .map(|spec| spec.name.as_str())
                .collect();
            return Err(refuse(
                Some(id),
                "unknown_component",
                format!("There is no component \"{component}\"."),
                format!("Use one of: {}.", known.join(", ")),
            ));
        };
        let facts = bound.facts(spec, props);
        if let Some(missing) = facts.unresolved.first() {
            return Err(refuse(
                Some(id),
                "unbound_data",
                format!("The {component} binds {missing}, which points nowhere in the page data."),
                "Bind only pointers listed in the data summary, or write the value literally."
                    .to_owned(),
            ));
        }
        if let Err(message) = &facts.valid {
            return Err(refuse(
                Some(id),
                "invalid_props",
                format!("Invalid props for {component}: {message}"),
                format!("Call {component} again with props that match its schema."),
            ));
        }
        if facts.fields.is_empty() {
            return Ok(());
        }
        let placed = self.field_nodes(catalog, bound);
        for field in &facts.fields {
            let clash = placed.iter().find(|(node, _, other)| {
                *node != id && other.fields.iter().any(|info| info.name == field.name)
            });
            if let Some((clash, _, _)) = clash {
                let mut issue = refuse(
                    Some(id),
                    "duplicate_field_name",
                    format!(
                        "Node \"{clash}\" already submits under the name \"{}\".",
                        field.name
                    ),
                    "Use a different `name`, or update that node instead.".to_owned(),
                );
                issue.field = Some(field.name.clone());
                return Err(issue);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule<T>(result: Result<T, TreeIssue>) -> Option<&'static str> {
        result.err().map(|issue| issue.rule)
    }

    #[test]
    fn components_are_added_with_fresh_ids_under_their_parent() -> Result<(), TreeIssue> {
        let catalog = Catalog::defaults();
        let data = json!({"emails": []});
        let mut tree = PageTree::default();
        let heading = tree.add(&catalog, &data, "Heading", json!({"text": "Inbox"}), None)?;
        let form = tree.add(&catalog, &data, "Form", json!({}), None)?;
        let input = tree.add(
            &catalog,
            &data,
            "Input",
            json!({"name": "a", "label": "A"}),
            Some(&form),
        )?;
        assert_eq!(
            (heading.as_str(), form.as_str(), input.as_str()),
            ("c1", "c2", "c3")
        );
        assert_eq!(tree.order, vec!["c1", "c2"]);
        assert_eq!(tree.nodes["c2"].children, vec!["c3"]);
        assert!(tree.validate(&catalog, &data).is_empty());
        Ok(())
    }

    #[test]
    fn bad_additions_are_refused_and_leave_the_tree_unchanged() -> Result<(), TreeIssue> {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut tree = PageTree::default();
        let text = tree.add(&catalog, &data, "Text", json!({"text": "x"}), None)?;
        let form = tree.add(&catalog, &data, "Form", json!({}), None)?;
        tree.add(
            &catalog,
            &data,
            "Checkbox",
            json!({"name": "ok", "label": "OK"}),
            Some(&form),
        )?;
        let before = tree.clone();
        assert_eq!(
            rule(tree.add(&catalog, &data, "Marquee", json!({}), None)),
            Some("unknown_component")
        );
        assert_eq!(
            rule(tree.add(&catalog, &data, "Text", json!({"text": "x"}), Some("c99"))),
            Some("unknown_parent")
        );
        assert_eq!(
            rule(tree.add(&catalog, &data, "Text", json!({"text": "x"}), Some(&text))),
            Some("parent_not_layout")
        );
        assert_eq!(
            rule(tree.add(&catalog, &data, "Heading", json!({"size": 1}), None)),
            Some("invalid_props")
        );
        assert_eq!(
            rule(tree.add(
                &catalog,
                &data,
                "Table",
                json!({"rows": {"$data": "/nope"}}),
                None
            )),
            Some("unbound_data")
        );
        assert_eq!(
            rule(tree.add(
                &catalog,
                &data,
                "Input",
                json!({"name": "ok", "label": "B"}),
                Some(&form)
            )),
            Some("duplicate_field_name")
        );
        assert_eq!(
            rule(tree.add(&catalog, &data, "Form", json!({}), None)),
            Some("multiple_forms")
        );
        assert_eq!(tree, before);
        Ok(())
    }

    #[test]
    fn updates_replace_props_after_the_same_checks() -> Result<(), TreeIssue> {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut tree = PageTree::default();
        let input = tree.add(
            &catalog,
            &data,
            "Input",
            json!({"name": "a", "label": "A"}),
            None,
        )?;
        tree.update(
            &catalog,
            &data,
            &input,
            json!({"name": "a", "label": "Renamed"}),
        )?;
        assert_eq!(tree.nodes[&input].props["label"], "Renamed");
        assert_eq!(
            rule(tree.update(&catalog, &data, &input, json!({"label": "no name"}))),
            Some("invalid_props")
        );
        assert_eq!(
            rule(tree.update(&catalog, &data, "c42", json!({}))),
            Some("unknown_node")
        );
        Ok(())
    }

    #[test]
    fn removing_a_node_removes_its_subtree_and_every_reference() -> Result<(), TreeIssue> {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut tree = PageTree::default();
        let card = tree.add(&catalog, &data, "Card", json!({}), None)?;
        let inner = tree.add(&catalog, &data, "Container", json!({}), Some(&card))?;
        tree.add(&catalog, &data, "Text", json!({"text": "x"}), Some(&inner))?;
        let kept = tree.add(&catalog, &data, "Divider", json!({}), None)?;
        let removed = tree.remove(&card)?;
        assert_eq!(removed, vec!["c1", "c2", "c3"]);
        assert_eq!(tree.order, vec![kept.clone()]);
        assert_eq!(tree.nodes.keys().collect::<Vec<_>>(), vec![&kept]);
        assert_eq!(rule(tree.remove("c1")), Some("unknown_node"));
        Ok(())
    }

    fn node(component: &str, props: Value, children: Vec<Subtree>) -> Subtree {
        Subtree {
            component: component.to_owned(),
            props,
            children,
        }
    }

    fn input(name: &str) -> Subtree {
        node("Input", json!({"name": name, "label": name}), Vec::new())
    }

    #[test]
    fn a_subtree_is_placed_in_one_call_with_every_id_returned() -> Result<(), Box<SubtreeIssue>> {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut tree = PageTree::default();
        tree.add(&catalog, &data, "Heading", json!({"text": "Hi"}), None)
            .map_err(|issue| {
                Box::new(SubtreeIssue {
                    path: String::new(),
                    component: "Heading".into(),
                    issue,
                })
            })?;
        let form = node(
            "Form",
            json!({}),
            vec![
                input("a"),
                node(
                    "Container",
                    json!({"direction": "row"}),
                    vec![
                        node("Button", json!({"label": "Go"}), Vec::new()),
                        node(
                            "Button",
                            json!({"label": "No", "kind": "cancel"}),
                            Vec::new(),
                        ),
                    ],
                ),
            ],
        );
        let placed = tree.add_subtree(&catalog, &data, &form, None)?;
        assert_eq!(
            serde_json::to_value(&placed).unwrap_or_default(),
            json!({"id": "c2", "children": [{"id": "c3"},
                  {"id": "c4", "children": [{"id": "c5"}, {"id": "c6"}]}]})
        );
        assert_eq!(placed.inside(), vec!["c3", "c4", "c5", "c6"]);
        assert_eq!(tree.order, vec!["c1", "c2"]);
        assert_eq!(tree.nodes["c2"].children, vec!["c3", "c4"]);
        assert_eq!(tree.nodes["c4"].children, vec!["c5", "c6"]);
        assert_eq!(tree.nodes["c6"].props["kind"], "cancel");
        assert!(tree.validate(&catalog, &data).is_empty());
        Ok(())
    }

    #[test]
    fn one_bad_node_refuses_the_whole_subtree_naming_its_path() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut tree = PageTree::default();
        let before = tree.clone();
        let bad_child = node(
            "Form",
            json!({}),
            vec![
                input("a"),
                input("b"),
                node("Input", json!({"label": "no name"}), Vec::new()),
                node("Button", json!({"label": "Go"}), Vec::new()),
            ],
        );
        let refused = tree.add_subtree(&catalog, &data, &bad_child, None).err();
        assert_eq!(
            refused.as_ref().map(|refused| (
                refused.path.as_str(),
                refused.component.as_str(),
                refused.issue.rule
            )),
            Some(("children[2]", "Input", "invalid_props"))
        );
        assert_eq!(
            refused.and_then(|refused| refused.issue.node),
            None,
            "the refused node's id was never kept"
        );
        assert_eq!(tree, before, "nothing of the call stays");
    }

    #[test]
    fn errors_deep_in_a_subtree_name_the_nested_path() {
        let catalog = Catalog::defaults();
        let data = json!({"rows": []});
        let mut tree = PageTree::default();
        let deep = node(
            "Card",
            json!({}),
            vec![
                node("Text", json!({"text": "x"}), Vec::new()),
                node(
                    "Container",
                    json!({}),
                    vec![node(
                        "Details",
                        json!({"summary": "More"}),
                        vec![node(
                            "Table",
                            json!({"rows": {"$data": "/nope"}}),
                            Vec::new(),
                        )],
                    )],
                ),
            ],
        );
        let refused = tree.add_subtree(&catalog, &data, &deep, None).err();
        assert_eq!(
            refused.map(|refused| (refused.path, refused.component, refused.issue.rule)),
            Some((
                "children[1].children[0].children[0]".to_owned(),
                "Table".to_owned(),
                "unbound_data"
            ))
        );
        assert!(tree.is_empty());
        let text_with_children = node(
            "Card",
            json!({}),
            vec![node(
                "Text",
                json!({"text": "x"}),
                vec![node("Divider", json!({}), Vec::new())],
            )],
        );
        let refused = tree
            .add_subtree(&catalog, &data, &text_with_children, None)
            .err();
        assert_eq!(
            refused.map(|refused| (refused.path, refused.issue.rule)),
            Some(("children[0]".to_owned(), "children_not_allowed"))
        );
        assert!(tree.is_empty());
    }

    #[test]
    fn a_name_clash_inside_one_call_names_the_sibling_by_its_path() {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut tree = PageTree::default();
        let clash = node("Form", json!({}), vec![input("email"), input("email")]);
        let refused = tree.add_subtree(&catalog, &data, &clash, None).err();
        let issue = refused.map(|refused| (refused.path, refused.issue));
        assert_eq!(
            issue
                .as_ref()
                .map(|(path, issue)| (path.as_str(), issue.rule)),
            Some(("children[1]", "duplicate_field_name"))
        );
        let message = issue.map(|(_, issue)| issue.message).unwrap_or_default();
        assert!(message.contains("children[0]"), "{message}");
        assert!(!message.contains("\"c2\""), "{message}");
    }

    #[test]
    fn moving_puts_a_node_and_its_subtree_under_another_parent_at_an_index() -> Result<(), TreeIssue>
    {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut tree = PageTree::default();
        let form = tree.add(&catalog, &data, "Form", json!({}), None)?;
        let first = tree.add(
            &catalog,
            &data,
            "Checkbox",
            json!({"name": "a", "label": "A"}),
            Some(&form),
        )?;
        let card = tree.add(&catalog, &data, "Card", json!({}), None)?;
        let inside = tree.add(
            &catalog,
            &data,
            "Input",
            json!({"name": "b", "label": "B"}),
            Some(&card),
        )?;
        assert_eq!(tree.move_node(&catalog, &card, Some(&form), Some(0))?, 0);
        assert_eq!(
            tree.nodes[&form].children,
            vec![card.clone(), first.clone()]
        );
        assert_eq!(tree.nodes[&card].children, vec![inside.clone()]);
        assert_eq!(tree.top_level(), vec![form.as_str()]);
        // Back to the top level, first; an index past the end means last.
        assert_eq!(tree.move_node(&catalog, &card, None, Some(0))?, 0);
        assert_eq!(tree.top_level(), vec![card.as_str(), form.as_str()]);
        assert_eq!(tree.move_node(&catalog, &first, Some(&form), Some(99))?, 0);
        assert_eq!(tree.nodes[&form].children, vec![first]);
        assert!(tree.validate(&catalog, &data).is_empty());
        Ok(())
    }

    #[test]
    fn moves_that_would_break_the_tree_are_refused_and_change_nothing() -> Result<(), TreeIssue> {
        let catalog = Catalog::defaults();
        let data = json!({});
        let mut tree = PageTree::default();
        let card = tree.add(&catalog, &data, "Card", json!({}), None)?;
        let inner = tree.add(&catalog, &data, "Container", json!({}), Some(&card))?;
        let text = tree.add(&catalog, &data, "Text", json!({"text": "x"}), None)?;
        let before = tree.clone();
        assert_eq!(
            rule(tree.move_node(&catalog, &card, Some(&inner), None)),
            Some("cycle")
        );
        assert_eq!(
            rule(tree.move_node(&catalog, &card, Some(&card), None)),
            Some("cycle")
        );
        assert_eq!(
            rule(tree.move_node(&catalog, &card, Some(&text), None)),
            Some("parent_not_layout")
        );
        assert_eq!(
            rule(tree.move_node(&catalog, &card, Some("c99"), None)),
            Some("unknown_parent")
        );
        assert_eq!(
            rule(tree.move_node(&catalog, "c42", None, None)),
            Some("unknown_node")
        );
        assert_eq!(tree, before);
        Ok(())
    }
}
