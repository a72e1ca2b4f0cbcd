//! What the request asks to see: cues in the prompt's words, turned into page sections.
//!
//! A person who writes "this week's sales dashboard: totals, a chart per day and top products"
//! expects totals, a chart and a ranked table, not the raw rows. The heuristic cannot read the
//! data (it sees the summary a model sees), and a page must stay right when it is re-rendered
//! with newer data or served from the cache for another snapshot of the same shape, so every
//! number here is a computed binding (`tessera_app::binding::computed`): the tree says "sum the
//! `amount` column", code sums it at render time. Nothing here invents a value.
//!
//! The cues, each decided from the words alone and deterministic:
//! - chart / graph / plot / trend / per day / daily / over time → a Chart of the main numeric
//!   column totalled per label (a day, date, month … column, or the one named after "per");
//! - total / sum / count / how many / dashboard → Stat cards: row counts and column totals;
//! - top N (largest, biggest, highest) → a table sorted by the numeric column, cut to N rows
//!   (ranking groups when the thing named is a column, as in "top products" over sales rows);
//! - group(ed) by X / broken down by X → the totals per X, and the rows kept together by X;
//! - delete / deactivate / reject / revoke … as the request's first action → a danger button;
//! - always: a one-line summary of what is asked (the fields) or shown (the sections).
//!
//! It also labels what it places from the response schema's `title`s where a data key has a
//! field of the same name, and humanizes keys otherwise. It must not place form fields: that is
//! the heuristic's field planning.

mod columns;
mod labels;
mod sections;
mod summary;
mod words;

use serde_json::{json, Value};

use super::{literal, Plan, Planned};
use crate::agent::prompt::ParsedPrompt;
use columns::{
    key_names, label_column, main_array, numeric_columns, record_arrays, text_columns, value_column,
};
use labels::{lower_first, retitle_props, short_heading, Labels};
use sections::{chart_node, group_nodes, top_node, totals};
pub(super) use summary::picked_rows_label;
use summary::summary_line;
pub(super) use words::destructive_action;
use words::{
    prompt_words, read, same_word, ChartCue, TopCue, CONSTRUCTIVE_VERBS, DESTRUCTIVE_VERBS,
    TIME_UNITS, TIME_WORDS, VALUE_WORDS,
};

/// The slot of the row of computed Stats.
pub(super) const TOTALS_SLOT: &str = "totals";

/// Rows a "top" table keeps when the request names no number.
const DEFAULT_TOP: usize = 5;
/// The most rows a "top N" table keeps, whatever the request says.
const MAX_TOP: usize = 50;
/// Computed Stats, at most.
const MAX_TOTALS: usize = 4;
/// Column totals among the computed Stats, at most.
const MAX_COLUMN_TOTALS: usize = 2;
/// Raw tables of summarised arrays longer than this are paged.
const RAW_PAGE_ABOVE: usize = 15;
/// Rows per page of such a raw table.
const RAW_PAGE_SIZE: u64 = 10;
/// Field labels listed in the summary line before "and N more".
const SUMMARY_FIELDS: usize = 4;

/// The sections the cues add, placed after the request's text and before the data.
#[derive(Debug, Default)]
pub(super) struct CuedPage {
    /// The one-line summary of what is asked or shown.
    pub summary: Option<Planned>,
    /// The computed Stats (children of the totals row).
    totals: Vec<Planned>,
    /// Chart, ranking and grouping sections, in order.
    sections: Vec<Planned>,
    /// Arrays whose rows are kept together by a column: (pointer, column).
    grouped: Vec<(String, String)>,
    /// Arrays the cued sections summarise, with their lengths: their raw rows come after, paged.
    summarised: Vec<(String, usize)>,
    /// Whether the request's words are all said again by the summary line (a display page whose
    /// first sentence lists what to show), so the heading may stop at the colon.
    restated: bool,
}

impl CuedPage {
    /// Plans the cued sections of `parsed`, using only the offered components.
    pub(super) fn plan(parsed: &ParsedPrompt, offered: &std::collections::BTreeSet<&str>) -> Self {
        let has = |name: &str| offered.contains(name);
        let cues = read(&parsed.prompt);
        let words = prompt_words(&parsed.prompt);
        let labels = Labels::new(parsed.schema.as_ref());
        let arrays = record_arrays(parsed);
        let main = main_array(&arrays, &words);
        let mut page = Self::default();
        let mut shown: Vec<String> = Vec::new();

        if cues.totals && has("Stat") {
            page.totals = totals(&arrays, main, &labels);
            if !page.totals.is_empty() {
                shown.push("the totals".to_owned());
            }
        }
        if let (Some(chart), Some(main), true) = (&cues.chart, main, has("Chart")) {
            if let Some((node, described)) = chart_node(chart, main, &labels) {
                page.sections.push(node);
                shown.push(described);
            }
        }
        if let (Some(top), true) = (&cues.top, has("Table")) {
            if let Some((node, described)) = top_node(top, &arrays, main, &labels) {
                page.sections.push(node);
                shown.push(described);
            }
        }
        if let (Some(group), true) = (&cues.group_by, has("Table")) {
            if let Some((nodes, grouped, described)) = group_nodes(group, &arrays, &labels) {
                page.sections.extend(nodes);
                page.grouped.push(grouped);
                shown.push(described);
            }
        }
        if !page.totals.is_empty() || !page.sections.is_empty() {
            page.summarised = arrays
                .iter()
                .filter(|entry| {
                    let pointer = &entry.pointer;
                    let mentions = |node: &Planned| {
                        node.props
                            .to_string()
                            .contains(&format!("\"$data\":\"{pointer}\""))
                    };
                    page.totals.iter().chain(&page.sections).any(mentions)
                })
                .map(|entry| (entry.pointer.clone(), entry.length.unwrap_or(0)))
                .collect();
        }
        page.restated = parsed.schema.is_none() && !shown.is_empty() && has("Text");
        if has("Text") {
            let line = summary_line(parsed, &shown);
            page.summary = Some(Planned::new(
                "Text",
                json!({"text": literal(&line), "muted": true}),
            ));
        }
        page
    }

    /// Adds the totals row and the cued sections to `plan`.
    pub(super) fn place(&self, plan: &mut Plan, offered: &std::collections::BTreeSet<&str>) {
        match self.totals.len() {
            0 => {}
            1 => plan.top.extend(self.totals.iter().cloned()),
            _ if offered.contains("Container") => {
                plan.top.push(Planned {
                    component: "Container",
                    props: json!({"direction": "row", "gap": "md"}),
                    slot_id: Some(TOTALS_SLOT),
                    children: Vec::new(),
                });
                plan.inside.insert(TOTALS_SLOT, self.totals.clone());
            }
            _ => plan.top.extend(self.totals.iter().cloned()),
        }
        plan.top.extend(self.sections.iter().cloned());
    }

    /// Final touches on the whole plan: rows of grouped arrays sorted by their group, and labels
    /// of data keys that the response schema titles.
    pub(super) fn polish(&self, parsed: &ParsedPrompt, plan: &mut Plan) {
        let labels = Labels::new(parsed.schema.as_ref());
        let nodes = plan
            .top
            .iter_mut()
            .chain(plan.inside.values_mut().flatten());
        for node in nodes {
            if node.component == "Table" && node.props.get("selectable").is_none() {
                for (pointer, length) in &self.summarised {
                    let bound = node.props.get("rows") == Some(&json!({"$data": pointer}));
                    if bound && *length > RAW_PAGE_ABOVE && node.props.get("pageSize").is_none() {
                        node.props["pageSize"] = json!(RAW_PAGE_SIZE);
                    }
                }
                for (pointer, column) in &self.grouped {
                    let bound = node.props.get("rows") == Some(&json!({"$data": pointer}));
                    if bound {
                        node.props["rows"] = json!({"$data": pointer, "$sortBy": column});
                    }
                }
            }
            if self.restated && node.component == "Heading" && node.props["level"] == 1 {
                if let Some(text) = node.props["text"].as_str() {
                    node.props["text"] = Value::String(short_heading(text));
                }
            }
            retitle_props(&mut node.props, &labels);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tessera_app::{binding::resolve_props, tree::PageTree};

    use super::super::tests::build;
    use super::*;

    fn sales() -> Value {
        let days = ["2026-11-16", "2026-11-17", "2026-11-18"];
        let products = ["Tea", "Cake", "Soup", "Bread", "Jam", "Milk"];
        let rows: Vec<Value> = (0..18_usize)
            .map(|index| {
                json!({
                    "id": format!("s{index}"),
                    "day": days[index % 3],
                    "product": products[index % 6],
                    "amount": (index * 7 % 23) as f64 + 0.5,
                })
            })
            .collect();
        json!({ "sales": rows })
    }

    fn props_of<'a>(tree: &'a PageTree, component: &str) -> Vec<&'a Value> {
        tree.nodes
            .values()
            .filter(|node| node.component == component)
            .map(|node| &node.props)
            .collect()
    }

    const DASHBOARD: &str =
        "Show this week's sales dashboard: totals, a chart per day, and top products";

    #[test]
    fn a_dashboard_request_gets_computed_totals_a_chart_per_day_and_the_top_products(
    ) -> anyhow::Result<()> {
        let data = sales();
        let (tree, report, _) = build(DASHBOARD, None, &data)?;
        assert!(report.ok, "{report:?}");
        let rows = data["sales"].as_array().cloned().unwrap_or_default();
        let expected_total: f64 = rows.iter().filter_map(|row| row["amount"].as_f64()).sum();

        let stats: Vec<Value> = props_of(&tree, "Stat")
            .into_iter()
            .map(|props| resolve_props(props, &data))
            .collect();
        let total = stats
            .iter()
            .find(|stat| stat["label"] == "Total amount")
            .map(|stat| stat["value"].as_f64());
        assert_eq!(total, Some(Some(expected_total)));
        assert!(stats
            .iter()
            .any(|stat| stat["label"] == "Number of sales" && stat["value"] == json!(18)));

        assert_eq!(
            props_of(&tree, "Heading")[0]["text"],
            "This week's sales dashboard",
            "the summary line says what the colon listed"
        );
        let raw = props_of(&tree, "Table")
            .into_iter()
            .find(|table| table["caption"] == "Sales")
            .ok_or_else(|| anyhow::anyhow!("no raw sales table"))?;
        assert_eq!(
            raw["pageSize"],
            json!(RAW_PAGE_SIZE),
            "the raw rows come after, paged"
        );

        let charts = props_of(&tree, "Chart");
        assert_eq!(charts.len(), 1);
        let chart = resolve_props(charts[0], &data);
        assert_eq!(chart["title"], "Amount per day");
        assert_eq!(chart["labelKey"], "day");
        let points = chart["data"].as_array().cloned().unwrap_or_default();
        assert_eq!(points.len(), 3, "one point per day: {points:?}");
        let monday: f64 = rows
            .iter()
            .filter(|row| row["day"] == "2026-11-16")
            .filter_map(|row| row["amount"].as_f64())
            .sum();
        assert_eq!(points[0]["amount"].as_f64(), Some(monday));

        let top = props_of(&tree, "Table")
            .into_iter()
            .map(|props| resolve_props(props, &data))
            .find(|table| table["caption"] == "Top 5 products by amount")
            .ok_or_else(|| anyhow::anyhow!("no top products table"))?;
        let ranked = top["rows"].as_array().cloned().unwrap_or_default();
        assert_eq!(ranked.len(), 5);
        let totals: Vec<f64> = ranked
            .iter()
            .filter_map(|row| row["amount"].as_f64())
            .collect();
        assert!(
            totals.windows(2).all(|pair| pair[0] >= pair[1]),
            "{totals:?}"
        );
        Ok(())
    }

    #[test]
    fn the_summary_line_lists_what_is_asked_or_what_is_shown() -> anyhow::Result<()> {
        let data = sales();
        let (tree, _, _) = build(DASHBOARD, None, &data)?;
        let texts: Vec<&Value> = props_of(&tree, "Text");
        assert_eq!(
            texts[0]["text"],
            "Nothing to answer: this page shows the totals, a chart of amount per day and the top 5 products."
        );
        let schema = crate::forms::FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": ["approve", "reject"]},
                "reason": {"type": "string", "title": "Why"}
            },
            "required": ["decision"]
        }))?;
        let (tree, _, _) = build("Approve the refund", Some(&schema), &json!({"amount": 12}))?;
        assert_eq!(
            props_of(&tree, "Text")[0]["text"],
            "Please answer: decision and why (optional)."
        );
        Ok(())
    }

    #[test]
    fn a_destructive_request_gets_a_danger_submit_button() -> anyhow::Result<()> {
        let schema = crate::forms::FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {"account_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}}
        }))?;
        let data = json!({"accounts": [{"id": "a1", "email": "x@example.com"}, {"id": "a2", "email": "y@example.com"}]});
        let (tree, report, _) = build("Deactivate dormant accounts", Some(&schema), &data)?;
        assert!(report.ok, "{report:?}");
        assert!(props_of(&tree, "Button")
            .contains(&&json!({"label": "Deactivate", "variant": "danger", "kind": "submit"})));
        assert_eq!(
            props_of(&tree, "Text")[0]["text"],
            "Please answer: which accounts."
        );
        Ok(())
    }

    #[test]
    fn grouping_totals_each_group_and_keeps_the_rows_together() -> anyhow::Result<()> {
        let data = json!({"expenses": [
            {"id": "e1", "category": "Travel", "amount": 120},
            {"id": "e2", "category": "Meals", "amount": 30},
            {"id": "e3", "category": "Travel", "amount": 80},
        ]});
        let (tree, report, _) = build("Expenses for March grouped by category", None, &data)?;
        assert!(report.ok, "{report:?}");
        let tables: Vec<Value> = props_of(&tree, "Table")
            .into_iter()
            .map(|props| resolve_props(props, &data))
            .collect();
        let per_group = tables
            .iter()
            .find(|table| table["caption"] == "Expenses by category")
            .ok_or_else(|| anyhow::anyhow!("no per-category table"))?;
        assert_eq!(
            per_group["rows"],
            json!([{"category": "Travel", "amount": 200}, {"category": "Meals", "amount": 30}])
        );
        let rows = tables
            .iter()
            .find(|table| table["caption"] == "Expenses")
            .ok_or_else(|| anyhow::anyhow!("no rows table"))?;
        let categories: Vec<&str> = rows["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|row| row["category"].as_str())
            .collect();
        assert_eq!(categories, ["Meals", "Travel", "Travel"]);
        assert!(tables
            .iter()
            .any(|table| table["caption"] == "Expenses by category"));
        Ok(())
    }

    #[test]
    fn data_labels_take_the_schema_titles_and_are_humanized_otherwise() -> anyhow::Result<()> {
        let schema = crate::forms::FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "amount": {"type": "number", "title": "Refund (EUR)"},
                "approve": {"type": "boolean"}
            }
        }))?;
        let data = json!({"orders": [{"id": "o1", "order_date": "2026-11-02", "amount": 40}]});
        let (tree, report, _) = build("Approve the refund; total shown", Some(&schema), &data)?;
        assert!(report.ok, "{report:?}");
        let orders = props_of(&tree, "Table")
            .into_iter()
            .find(|table| table["caption"] == "Orders")
            .ok_or_else(|| anyhow::anyhow!("no orders table"))?;
        let labels: Vec<&str> = orders["columns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|column| column["label"].as_str())
            .collect();
        assert!(labels.contains(&"Order date"), "{labels:?}");
        assert!(labels.contains(&"Refund (EUR)"), "{labels:?}");
        assert!(props_of(&tree, "Stat")
            .iter()
            .any(|stat| stat["label"] == "Total refund (EUR)"));
        Ok(())
    }
}
