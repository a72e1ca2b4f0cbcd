//! Edits the agent loop's tools make to a tree: add, update and remove a component.
//!
//! Each edit checks what it can check locally (the component exists, the parent is a layout, the
//! props are valid against the data, the field name is free, there is one Form) and refuses with a
//! [`TreeIssue`] the model can act on, leaving the tree unchanged. Whole-tree checks stay in
//! [`PageTree::validate`].

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Node, PageTree, TreeIssue};
use crate::binding::{resolve_props, unresolved_bindings};
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
        if let Some(parent_id) = parent {
            let Some(parent_node) = self.nodes.get(parent_id) else {
                return Err(refuse(
                    Some(parent_id),
                    "unknown_parent",
                    format!("There is no node \"{parent_id}\" to place the {component} in."),
                    "Use an id returned by an earlier call, or omit `parent`.".to_owned(),
                ));
            };
            let is_layout = catalog
                .get(&parent_node.component)
                .is_some_and(|spec| spec.role == Role::Layout);
            if !is_layout {
                return Err(refuse(
                    Some(parent_id),
                    "parent_not_layout",
                    format!(
                        "Node \"{parent_id}\" is a {}, which cannot hold children.",
                        parent_node.component
                    ),
                    "Use the id of a Form, Container, Card or Details as `parent`.".to_owned(),
                ));
            }
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
        self.check_node(catalog, data, &id, component, &props)?;
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
        let Some(component) = self.nodes.get(id).map(|node| node.component.clone()) else {
            return Err(self.unknown_node(id));
        };
        self.check_node(catalog, data, id, &component, &props)?;
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
        data: &Value,
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
        if let Some(missing) = unresolved_bindings(props, data).into_iter().next() {
            return Err(refuse(
                Some(id),
                "unbound_data",
                format!("The {component} binds {missing}, which points nowhere in the page data."),
                "Bind only pointers listed in the data summary, or write the value literally."
                    .to_owned(),
            ));
        }
        let resolved = resolve_props(props, data);
        if let Err(message) = (spec.validate)(&resolved) {
            return Err(refuse(
                Some(id),
                "invalid_props",
                format!("Invalid props for {component}: {message}"),
                format!("Call {component} again with props that match its schema."),
            ));
        }
        let fields = spec
            .field_info
            .as_ref()
            .map(|read| read(&resolved))
            .unwrap_or_default();
        for field in fields {
            let clash = self
                .fields(catalog, data)
                .into_iter()
                .find(|placed| placed.name == field.name && placed.node != id);
            if let Some(clash) = clash {
                let mut issue = refuse(
                    Some(id),
                    "duplicate_field_name",
                    format!(
                        "Node \"{}\" already submits under the name \"{}\".",
                        clash.node, field.name
                    ),
                    "Use a different `name`, or update that node instead.".to_owned(),
                );
                issue.field = Some(field.name);
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
}
