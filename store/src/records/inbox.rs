//! A signed-in person's inbox (DESIGN.md §15): the asks that name them as an assignee, across
//! workflows, each with where it stands for them. Groups need nothing of their own here: a
//! group gives each member a `page_assignees` row with their own address.
//!
//! Nothing here reads the store or knows HTTP.

use serde_json::Value;

use super::{page::PageId, people::Outcome};

/// How many asks one inbox page lists.
pub const INBOX_PAGE_SIZE: i64 = 50;

/// One ask in a person's inbox.
#[derive(Clone, Debug, PartialEq)]
pub struct InboxEntry {
    /// The page asked.
    pub page_id: PageId,
    /// The person's place among its assignees.
    pub position: i64,
    /// The workflow whose run asked (`ask` for `POST /api/asks` and MCP), if any.
    pub workflow: Option<String>,
    /// The page tree, for its heading.
    pub tree: Value,
    /// When it was asked, unix ms.
    pub created_at_ms: i64,
    /// Its deadline, unix ms.
    pub expires_at_ms: i64,
    /// Where it stands for this person.
    pub state: InboxState,
}

/// Where an ask stands for the person whose inbox lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InboxState {
    /// Waiting for their answer.
    Open,
    /// They answered.
    Answered {
        /// Approved or declined.
        outcome: Outcome,
        /// When, unix ms.
        at_ms: i64,
    },
    /// Settled by the others before they answered.
    Decided,
    /// Past its deadline without their answer.
    Expired,
    /// Withdrawn by whoever asked.
    Withdrawn,
}

impl InboxEntry {
    /// What the ask is about: the text of its first heading, else of its first text, else a
    /// generic line.
    #[must_use]
    pub fn title(&self) -> String {
        let nodes = self.tree.get("nodes").and_then(Value::as_object);
        let text_of = |component: &str| {
            let mut ids: Vec<&String> = nodes.into_iter().flat_map(|nodes| nodes.keys()).collect();
            let order: Vec<&str> = self
                .tree
                .get("order")
                .and_then(Value::as_array)
                .map(|order| order.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            ids.sort_by_key(|id| {
                order
                    .iter()
                    .position(|placed| placed == id)
                    .unwrap_or(usize::MAX)
            });
            ids.into_iter().find_map(|id| {
                let node = nodes?.get(id.as_str())?;
                (node.get("component")?.as_str()? == component)
                    .then(|| node.get("props")?.get("text")?.as_str().map(str::to_owned))
                    .flatten()
            })
        };
        text_of("Heading")
            .or_else(|| text_of("Text"))
            .filter(|text| !text.trim().is_empty())
            .unwrap_or_else(|| "A request for your answer".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(tree: Value) -> InboxEntry {
        InboxEntry {
            page_id: PageId::new(),
            position: 0,
            workflow: None,
            tree,
            created_at_ms: 0,
            expires_at_ms: 0,
            state: InboxState::Open,
        }
    }

    #[test]
    fn the_title_is_the_first_heading_in_display_order() {
        let tree = json!({
            "nodes": {
                "a": {"component": "Heading", "props": {"text": "Second"}},
                "b": {"component": "Heading", "props": {"text": "Approve the budget"}},
                "c": {"component": "Text", "props": {"text": "Body"}},
            },
            "order": ["b", "a", "c"],
        });
        assert_eq!(entry(tree).title(), "Approve the budget");
        let plain = json!({"nodes": {"c": {"component": "Text", "props": {"text": "Body"}}}});
        assert_eq!(entry(plain).title(), "Body");
        assert_eq!(entry(json!({})).title(), "A request for your answer");
    }
}
