//! Structural and props checks of a [`PageTree`], reported as [`TreeIssue`]s a model can act on.
//!
//! Every rule has a stable `snake_case` code; messages name the node, and `fix` is one line that
//! tells the model what to do next. The checks never panic, whatever the tree holds.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use super::{BoundData, PageTree};
use crate::catalog::{Catalog, Role};

/// One problem found in a tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TreeIssue {
    /// The node the issue is about, when there is one.
    pub node: Option<String>,
    /// The form field name (field rules) or the prop path (props rules) the issue is about.
    pub field: Option<String>,
    /// A stable `snake_case` code, for example `missing_child`.
    pub rule: &'static str,
    /// What is wrong, naming the node.
    pub message: String,
    /// One line the model can act on.
    pub fix: String,
}

impl TreeIssue {
    fn new(node: &str, rule: &'static str, message: String, fix: String) -> Self {
        Self {
            node: Some(node.to_owned()),
            field: None,
            rule,
            message,
            fix,
        }
    }

    fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

pub(super) fn validate(
    tree: &PageTree,
    catalog: &Catalog,
    bound: &BoundData<'_>,
) -> Vec<TreeIssue> {
    let mut issues = Vec::new();
    check_order(tree, &mut issues);
    check_nodes(tree, catalog, bound, &mut issues);
    check_parents(tree, &mut issues);
    check_cycles(tree, &mut issues);
    check_forms(tree, &mut issues);
    check_field_names(tree, catalog, bound, &mut issues);
    issues
}

fn check_order(tree: &PageTree, issues: &mut Vec<TreeIssue>) {
    for id in &tree.order {
        if !tree.nodes.contains_key(id) {
            issues.push(TreeIssue {
                node: Some(id.clone()),
                field: None,
                rule: "unknown_order_entry",
                message: format!("`order` lists \"{id}\", but there is no node with that id."),
                fix: format!("Remove \"{id}\" from the order or place a component with that id."),
            });
        }
    }
}

fn check_nodes(
    tree: &PageTree,
    catalog: &Catalog,
    bound: &BoundData<'_>,
    issues: &mut Vec<TreeIssue>,
) {
    for (id, node) in &tree.nodes {
        for child in &node.children {
            if !tree.nodes.contains_key(child) {
                issues.push(TreeIssue::new(
                    id,
                    "missing_child",
                    format!("Node \"{id}\" lists child \"{child}\", which does not exist."),
                    format!(
                        "Remove \"{child}\" from the children of \"{id}\" or place that component."
                    ),
                ));
            }
        }
        let Some(spec) = catalog.get(&node.component) else {
            let known: Vec<&str> = catalog
                .specs()
                .iter()
                .map(|spec| spec.name.as_str())
                .collect();
            issues.push(TreeIssue::new(
                id,
                "unknown_component",
                format!(
                    "Node \"{id}\" uses component \"{}\", which is not in the catalog.",
                    node.component
                ),
                format!("Use one of: {}.", known.join(", ")),
            ));
            continue;
        };
        if spec.role != Role::Layout && !node.children.is_empty() {
            issues.push(TreeIssue::new(
                id,
                "children_not_allowed",
                format!(
                    "Node \"{id}\" is a {} ({}) and cannot have children.",
                    spec.name, spec.role
                ),
                format!("Move the children of \"{id}\" into a Container, Card, Details or Form."),
            ));
        }
        let facts = bound.facts(spec, &node.props);
        for missing in &facts.unresolved {
            let (path, pointer) = missing.split_once(": ").unwrap_or(("", missing.as_str()));
            let fix = filter_fix(pointer).unwrap_or_else(|| {
                "Bind only pointers listed in the data summary, or write the value literally."
                    .to_owned()
            });
            issues.push(
                TreeIssue::new(
                    id,
                    "unbound_data",
                    format!("Node \"{id}\" binds {pointer} in prop `{path}`, which points nowhere in the page data."),
                    fix,
                )
                .with_field(path),
            );
        }
        if let Err(message) = &facts.valid {
            issues.push(TreeIssue::new(
                id,
                "invalid_props",
                format!("Node \"{id}\" ({}) has invalid props: {message}", spec.name),
                format!(
                    "Call UpdateComponent on \"{id}\" with props that match the {} schema.",
                    spec.name
                ),
            ));
        }
    }
}

/// For a template with filters (`{{/tasks|sum(hours)}}`, which no template has), the computed
/// binding that does what was meant: models write filters from other template languages.
fn filter_fix(pointer: &str) -> Option<String> {
    let inner = pointer
        .trim()
        .trim_start_matches("{{")
        .trim_end_matches("}}");
    let (base, filters) = inner.split_once('|')?;
    let mut binding = Map::new();
    binding.insert("$data".to_owned(), Value::String(base.trim().to_owned()));
    for filter in filters.split('|') {
        // `sum(hours)`, `sum('hours')` or `sum: hours`.
        let (name, argument) = filter
            .split_once('(')
            .or_else(|| filter.split_once(':'))
            .unwrap_or((filter, ""));
        let argument = argument
            .trim_end_matches(')')
            .trim_matches(|c: char| c == '\'' || c == '"' || c.is_whitespace());
        let key = match name.trim().to_ascii_lowercase().as_str() {
            "sum" | "total" => "$sum",
            "group" | "groupby" | "group_by" => "$groupBy",
            "sort" | "sortby" | "sort_by" => "$sortBy",
            "count" | "length" | "len" => {
                binding.insert("$count".to_owned(), Value::Bool(true));
                continue;
            }
            _ => continue,
        };
        if !argument.is_empty() {
            binding.insert(key.to_owned(), Value::String(argument.to_owned()));
        }
    }
    Some(format!(
        "A template holds one pointer and no filters; code computes totals, counts and groups: set the prop to {}.",
        Value::Object(binding)
    ))
}

fn check_parents(tree: &PageTree, issues: &mut Vec<TreeIssue>) {
    let mut parents: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (id, node) in &tree.nodes {
        for child in &node.children {
            parents.entry(child.as_str()).or_default().push(id.as_str());
        }
    }
    for (child, parent_ids) in parents {
        if parent_ids.len() > 1 && tree.nodes.contains_key(child) {
            let listed: Vec<String> = parent_ids
                .iter()
                .map(|parent| format!("\"{parent}\""))
                .collect();
            issues.push(TreeIssue::new(
                child,
                "multiple_parents",
                format!(
                    "Node \"{child}\" is listed as a child {} times, by {}.",
                    parent_ids.len(),
                    listed.join(", ")
                ),
                format!("Keep \"{child}\" in the children of one parent only."),
            ));
        }
    }
}

fn check_cycles(tree: &PageTree, issues: &mut Vec<TreeIssue>) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Active,
        Done,
    }
    let mut marks: BTreeMap<&str, Mark> = BTreeMap::new();
    let mut reported: BTreeSet<Vec<&str>> = BTreeSet::new();
    for start in tree.nodes.keys() {
        if marks.contains_key(start.as_str()) {
            continue;
        }
        // Iterative depth-first search: (node, index of the next child to visit).
        let mut path: Vec<(&str, usize)> = vec![(start.as_str(), 0)];
        marks.insert(start.as_str(), Mark::Active);
        while let Some((id, next)) = path.last().copied() {
            let children = tree
                .nodes
                .get(id)
                .map(|node| node.children.as_slice())
                .unwrap_or_default();
            let Some(child) = children.get(next) else {
                marks.insert(id, Mark::Done);
                path.pop();
                continue;
            };
            if let Some(last) = path.last_mut() {
                last.1 += 1;
            }
            let Some((child, _)) = tree.nodes.get_key_value(child) else {
                continue;
            };
            match marks.get(child.as_str()) {
                None => {
                    marks.insert(child.as_str(), Mark::Active);
                    path.push((child.as_str(), 0));
                }
                Some(Mark::Active) => {
                    let begin = path
                        .iter()
                        .position(|(step, _)| *step == child.as_str())
                        .unwrap_or(0);
                    let cycle: Vec<&str> = path[begin..].iter().map(|(step, _)| *step).collect();
                    let mut key = cycle.clone();
                    key.sort_unstable();
                    if reported.insert(key) {
                        let mut shown: Vec<&str> = cycle.clone();
                        shown.push(child.as_str());
                        issues.push(TreeIssue::new(
                            id,
                            "cycle",
                            format!("The children form a cycle: {}.", shown.join(" → ")),
                            format!("Remove \"{child}\" from the children of \"{id}\"."),
                        ));
                    }
                }
                Some(Mark::Done) => {}
            }
        }
    }
}

fn check_forms(tree: &PageTree, issues: &mut Vec<TreeIssue>) {
    let forms: Vec<&str> = tree
        .nodes
        .iter()
        .filter(|(_, node)| node.component == "Form")
        .map(|(id, _)| id.as_str())
        .collect();
    if let Some((first, rest)) = forms.split_first() {
        for extra in rest {
            issues.push(TreeIssue::new(
                extra,
                "multiple_forms",
                format!("Node \"{extra}\" is a second Form; a page has at most one (the first is \"{first}\")."),
                format!("Move the fields of \"{extra}\" into \"{first}\" and remove \"{extra}\"."),
            ));
        }
    }
}

fn check_field_names(
    tree: &PageTree,
    catalog: &Catalog,
    bound: &BoundData<'_>,
    issues: &mut Vec<TreeIssue>,
) {
    let mut first_by_name: BTreeMap<String, String> = BTreeMap::new();
    for (node, _, facts) in tree.field_nodes(catalog, bound) {
        for field in &facts.fields {
            match first_by_name.get(&field.name) {
                Some(first) => issues.push(
                    TreeIssue::new(
                        node,
                        "duplicate_field_name",
                        format!(
                            "Node \"{node}\" submits under name \"{}\", which node \"{first}\" already uses.",
                            field.name
                        ),
                        format!("Give \"{node}\" a different name or remove one of the two fields."),
                    )
                    .with_field(field.name.clone()),
                ),
                None => {
                    first_by_name.insert(field.name.clone(), node.to_owned());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn rules(tree: &Value, data: &Value) -> Result<Vec<&'static str>, serde_json::Error> {
        let tree: PageTree = serde_json::from_value(tree.clone())?;
        Ok(tree
            .validate(&Catalog::defaults(), data)
            .into_iter()
            .map(|issue| issue.rule)
            .collect())
    }

    fn heading(text: &str) -> Value {
        json!({"component": "Heading", "props": {"text": text, "level": 2}})
    }

    #[test]
    fn a_well_formed_tree_has_no_issues() -> Result<(), serde_json::Error> {
        let tree = json!({
            "nodes": {
                "c1": heading("Inbox"),
                "c2": {"component": "Table", "props": {"rows": {"$data": "/emails"}, "columns": [{"key": "subject", "label": "Subject"}]}},
                "c3": {"component": "Form", "children": ["c4", "c5"]},
                "c4": {"component": "Input", "props": {"name": "note", "label": "Note {{/user}}"}},
                "c5": {"component": "Button", "props": {"label": "Send"}}
            },
            "order": ["c1", "c2", "c3"]
        });
        let data = json!({"emails": [], "user": "Ada"});
        assert_eq!(rules(&tree, &data)?, Vec::<&str>::new());
        Ok(())
    }

    #[test]
    fn an_unknown_component_is_reported_and_a_known_one_is_not() -> Result<(), serde_json::Error> {
        assert_eq!(
            rules(
                &json!({"nodes": {"c1": {"component": "Marquee"}}}),
                &json!({})
            )?,
            vec!["unknown_component"]
        );
        assert!(rules(
            &json!({"nodes": {"c1": {"component": "Divider"}}}),
            &json!({})
        )?
        .is_empty());
        Ok(())
    }

    #[test]
    fn a_missing_child_is_reported_and_an_existing_one_is_not() -> Result<(), serde_json::Error> {
        let broken = json!({"nodes": {"c1": {"component": "Card", "children": ["c9"]}}});
        assert_eq!(rules(&broken, &json!({}))?, vec!["missing_child"]);
        let fine =
            json!({"nodes": {"c1": {"component": "Card", "children": ["c9"]}, "c9": heading("x")}});
        assert!(rules(&fine, &json!({}))?.is_empty());
        Ok(())
    }

    #[test]
    fn an_order_entry_without_a_node_is_reported() -> Result<(), serde_json::Error> {
        let broken = json!({"nodes": {"c1": heading("x")}, "order": ["c1", "c2"]});
        assert_eq!(rules(&broken, &json!({}))?, vec!["unknown_order_entry"]);
        Ok(())
    }

    #[test]
    fn children_on_a_display_component_are_reported() -> Result<(), serde_json::Error> {
        let broken = json!({"nodes": {"c1": {"component": "Text", "props": {"text": "a"}, "children": ["c2"]}, "c2": heading("x")}});
        assert_eq!(rules(&broken, &json!({}))?, vec!["children_not_allowed"]);
        Ok(())
    }

    #[test]
    fn a_cycle_is_reported_once_and_a_chain_is_not() -> Result<(), serde_json::Error> {
        let cyclic = json!({"nodes": {
            "a": {"component": "Card", "children": ["b"]},
            "b": {"component": "Container", "children": ["a"]}
        }});
        assert_eq!(rules(&cyclic, &json!({}))?, vec!["cycle"]);
        let self_child = json!({"nodes": {"a": {"component": "Card", "children": ["a"]}}});
        assert_eq!(rules(&self_child, &json!({}))?, vec!["cycle"]);
        let chain = json!({"nodes": {
            "a": {"component": "Card", "children": ["b"]},
            "b": {"component": "Container", "children": ["c"]},
            "c": heading("x")
        }});
        assert!(rules(&chain, &json!({}))?.is_empty());
        Ok(())
    }

    #[test]
    fn a_node_with_two_parents_is_reported_and_siblings_are_not() -> Result<(), serde_json::Error> {
        let shared = json!({"nodes": {
            "a": {"component": "Card", "children": ["c"]},
            "b": {"component": "Card", "children": ["c"]},
            "c": heading("x")
        }});
        assert_eq!(rules(&shared, &json!({}))?, vec!["multiple_parents"]);
        let siblings = json!({"nodes": {
            "a": {"component": "Card", "children": ["c", "d"]},
            "c": heading("x"), "d": heading("y")
        }});
        assert!(rules(&siblings, &json!({}))?.is_empty());
        Ok(())
    }

    #[test]
    fn duplicate_field_names_are_reported_and_distinct_ones_are_not(
    ) -> Result<(), serde_json::Error> {
        let field =
            |name: &str| json!({"component": "Input", "props": {"name": name, "label": "L"}});
        let duplicate = json!({"nodes": {"f": {"component": "Form", "children": ["a", "b"]}, "a": field("x"), "b": field("x")}});
        let tree: PageTree = serde_json::from_value(duplicate)?;
        let issues = tree.validate(&Catalog::defaults(), &json!({}));
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].rule, "duplicate_field_name");
        assert_eq!(issues[0].node.as_deref(), Some("b"));
        assert_eq!(issues[0].field.as_deref(), Some("x"));
        let distinct = json!({"nodes": {"f": {"component": "Form", "children": ["a", "b"]}, "a": field("x"), "b": field("y")}});
        assert!(rules(&distinct, &json!({}))?.is_empty());
        Ok(())
    }

    #[test]
    fn a_second_form_is_reported_and_one_form_is_not() -> Result<(), serde_json::Error> {
        let two = json!({"nodes": {"f1": {"component": "Form"}, "f2": {"component": "Form"}}});
        assert_eq!(rules(&two, &json!({}))?, vec!["multiple_forms"]);
        assert!(rules(&json!({"nodes": {"f1": {"component": "Form"}}}), &json!({}))?.is_empty());
        Ok(())
    }

    #[test]
    fn invalid_props_are_reported_with_the_reason_and_valid_ones_are_not(
    ) -> Result<(), serde_json::Error> {
        let tree: PageTree = serde_json::from_value(json!({"nodes": {
            "c1": {"component": "Heading", "props": {"text": "x", "level": 9}},
            "c2": {"component": "Heading", "props": {"text": "x", "colour": "red"}},
            "c3": {"component": "Input", "props": {"label": "No name"}}
        }}))?;
        let issues = tree.validate(&Catalog::defaults(), &json!({}));
        let found: Vec<(&str, &str)> = issues
            .iter()
            .map(|issue| (issue.node.as_deref().unwrap_or(""), issue.rule))
            .collect();
        assert_eq!(
            found,
            vec![
                ("c1", "invalid_props"),
                ("c2", "invalid_props"),
                ("c3", "invalid_props")
            ]
        );
        assert!(
            issues[1].message.contains("colour"),
            "{}",
            issues[1].message
        );
        assert!(issues[2].message.contains("name"), "{}", issues[2].message);
        assert!(rules(&json!({"nodes": {"c1": heading("x")}}), &json!({}))?.is_empty());
        Ok(())
    }

    #[test]
    fn bindings_that_point_nowhere_are_reported_and_bound_ones_are_not(
    ) -> Result<(), serde_json::Error> {
        let tree = json!({"nodes": {
            "t": {"component": "Table", "props": {"rows": {"$data": "/emails"}}},
            "h": {"component": "Heading", "props": {"text": "Hello {{/user/name}}"}}
        }});
        let tree_value: PageTree = serde_json::from_value(tree.clone())?;
        let issues = tree_value.validate(&Catalog::defaults(), &json!({}));
        let found: Vec<(&str, &str, &str)> = issues
            .iter()
            .map(|issue| {
                (
                    issue.node.as_deref().unwrap_or(""),
                    issue.field.as_deref().unwrap_or(""),
                    issue.rule,
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![("h", "text", "unbound_data"), ("t", "rows", "unbound_data")]
        );
        let data = json!({"emails": [{"subject": "x"}], "user": {"name": "Ada"}});
        assert!(rules(&tree, &data)?.is_empty());
        Ok(())
    }

    #[test]
    fn a_template_with_filters_is_answered_with_the_computed_binding_meant(
    ) -> Result<(), serde_json::Error> {
        let tree: PageTree = serde_json::from_value(json!({"nodes": {
            "k": {"component": "KeyValue", "props": {"items": [
                {"label": "Total hours", "value": "{{/tasks|sum('hours')}}"},
                {"label": "By owner", "value": "{{/tasks | groupBy: owner}}"}
            ]}}
        }, "order": ["k"]}))?;
        let data = json!({"tasks": [{"owner": "Ada", "hours": 3}]});
        let fixes: Vec<String> = tree
            .validate(&Catalog::defaults(), &data)
            .into_iter()
            .filter(|issue| issue.rule == "unbound_data")
            .map(|issue| issue.fix)
            .collect();
        assert_eq!(fixes.len(), 2, "{fixes:?}");
        assert!(
            fixes[0].contains(r#"{"$data":"/tasks","$sum":"hours"}"#),
            "{fixes:?}"
        );
        assert!(
            fixes[1].contains(r#"{"$data":"/tasks","$groupBy":"owner"}"#),
            "{fixes:?}"
        );
        Ok(())
    }

    #[test]
    fn every_issue_has_a_message_and_a_one_line_fix() -> Result<(), serde_json::Error> {
        let tree: PageTree = serde_json::from_value(json!({"nodes": {
            "a": {"component": "Card", "children": ["a", "zz"]},
            "b": {"component": "Nope"},
            "f1": {"component": "Form"}, "f2": {"component": "Form"}
        }, "order": ["q"]}))?;
        let issues = tree.validate(&Catalog::defaults(), &json!({}));
        assert!(issues.len() >= 5);
        for issue in issues {
            assert!(!issue.message.is_empty());
            assert!(
                !issue.fix.is_empty() && !issue.fix.contains('\n'),
                "{issue:?}"
            );
        }
        Ok(())
    }
}
