//! Page-quality warnings, which a model should fix but which do not block: fields without a
//! label, headings that skip a level, destructive buttons not styled as danger.

use serde_json::Value;
use tessera_app::tree::{PageTree, PlacedField};

use super::{issue, FormIssue};

pub(super) fn quality_warnings(tree: &PageTree, fields: &[PlacedField]) -> Vec<FormIssue> {
    let mut warnings = Vec::new();
    for placed in fields {
        if placed.label.trim().is_empty() {
            warnings.push(issue(
                Some(&placed.node),
                Some(&placed.name),
                "field_without_label",
                format!("field `{}` has no visible label", placed.name),
                "give it a short label a person understands".into(),
            ));
        }
    }
    let mut previous_level = 0_u64;
    for id in tree.document_order() {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        match node.component.as_str() {
            "Heading" => {
                let level = node.props.get("level").and_then(Value::as_u64).unwrap_or(2);
                if level > previous_level + 1 {
                    warnings.push(issue(
                        Some(id),
                        None,
                        "heading_order",
                        format!("heading `{id}` is level {level} after level {previous_level}"),
                        format!("use level {} here (start the page at level 1 and go down one at a time)", previous_level + 1),
                    ));
                }
                previous_level = level;
            }
            "Button" => {
                let label = node
                    .props
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_lowercase();
                let variant = node
                    .props
                    .get("variant")
                    .and_then(Value::as_str)
                    .unwrap_or("primary");
                if destroys(&label) && variant != "danger" {
                    warnings.push(issue(Some(id), None, "destructive_not_danger", format!("button `{id}` (\"{label}\") destroys something but is styled {variant}"), "set `variant: \"danger\"`".into()));
                }
            }
            _ => {}
        }
    }
    warnings
}

/// Whether a button labelled `label` destroys something (deletes, removes, wipes…), so it must
/// look dangerous.
#[must_use]
pub fn destroys(label: &str) -> bool {
    let label = label.to_lowercase();
    [
        "delete", "remove", "discard", "destroy", "purge", "erase", "wipe",
    ]
    .iter()
    .any(|verb| label.contains(verb))
}
