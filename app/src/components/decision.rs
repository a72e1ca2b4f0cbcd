//! `DecisionTable`: one table over rows of data with a choice per row (approve / reject / defer …),
//! for a response schema with two or more id arrays over the same rows.
//!
//! Each row gets one radio group named `_decide:<table>:<row id>` whose values are the schema's
//! field names; [`decode_decisions`] turns each chosen pair into `<field>=<row id>` before the
//! §5 decoder runs, so the submission decodes mechanically into the separate arrays. The fields
//! it reports carry a [`RowChoice`], so a crafted body that names a row under two arrays, or leaves
//! one undecided under `requireAll`, is refused on submit (`tessera::forms::offered`): radio
//! groups and `required` only bind a browser. "No decision" (an empty value) is a choice unless
//! `requireAll`.
//! More rows than a page are searched, sorted and paged like a selectable Table
//! ([`super::paging`]); decisions on other pages travel as hidden inputs.

use std::collections::BTreeMap;
use std::sync::Arc;

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::paging::{
    aria_sort, row_id_set, CarriedValues, CellText, Pager, SearchBar, SortButton, Window,
};
use super::table::{check_page_size, columns_or_keys, row_ids, rows_per_page, TableColumn};
use super::{check_name, display_text, Described, FieldNotes, RequiredMark, TICK_CLASS};
use crate::binding::BoundProps;
use crate::catalog::{ComponentProps, FieldInfo, FieldYield, Role, RowChoice};
use crate::render::budget::{value_size, BudgetLimit, Meter};
use crate::render::NodeCtx;

/// The form-key prefix of the per-row radio groups.
pub const DECISION_PREFIX: &str = "_decide:";
/// About what one radio, its cell and its label take besides the row's id and name.
const RADIO_BYTES: usize = 400;

/// One choice a row can get: the array field it puts the row's id in.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DecisionChoice {
    /// The id-array field that receives the row ids, such as `approved_ids`.
    pub name: String,
    /// The column header, such as "Approve".
    pub label: String,
}

/// Props of the `DecisionTable` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DecisionTableProps {
    /// Shown above the table, such as "Decide on each claim".
    pub label: String,
    /// The rows, bound with $data.
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub rows: Option<Vec<Value>>,
    /// The row key submitted, such as "id".
    pub id_key: String,
    /// 2 to 6 choices, one per id-array field.
    pub choices: Vec<DecisionChoice>,
    /// Columns shown (default: all keys).
    #[serde(default)]
    pub columns: Option<Vec<TableColumn>>,
    /// Every row must get a choice (no "No decision").
    #[serde(default)]
    pub require_all: bool,
    /// Rows per page (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub page_size: Option<u32>,
}

impl ComponentProps for DecisionTableProps {
    const NAME: &'static str = "DecisionTable";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str =
        "One choice per row for 2+ id-array fields over the same rows.";
    const BY_REFERENCE: &'static [&'static str] = &["rows"];

    fn example() -> (Value, Value) {
        (
            json!({
                "label": "Decide on each claim",
                "rows": {"$data": "/claims"},
                "idKey": "id",
                "columns": [{"key": "id", "label": "Claim"}, {"key": "amount", "label": "Amount"}, {"key": "reason", "label": "Reason"}],
                "choices": [{"name": "approved_ids", "label": "Approve"}, {"name": "rejected_ids", "label": "Reject"}]
            }),
            json!({"claims": [
                {"id": "CLM-1", "amount": 120, "reason": "Taxi to the client"},
                {"id": "CLM-2", "amount": 40, "reason": "Team lunch"},
                {"id": "CLM-3", "amount": 900, "reason": "Conference ticket"}
            ]}),
        )
    }

    fn check(&self) -> Result<(), String> {
        if !(2..=6).contains(&self.choices.len()) {
            return Err("`choices` must hold 2 to 6 choices".to_owned());
        }
        for (index, choice) in self.choices.iter().enumerate() {
            check_name(&choice.name)?;
            if self.choices[..index]
                .iter()
                .any(|earlier| earlier.name == choice.name)
            {
                return Err(format!("the choice name \"{}\" is used twice", choice.name));
            }
        }
        if self.id_key.trim().is_empty() {
            return Err("`idKey` must name the rows' id key".to_owned());
        }
        check_page_size(self.page_size)
    }

    fn fields(&self, bound: &BoundProps<'_>) -> Vec<FieldInfo> {
        let ids = row_ids(bound, self.rows.as_deref(), &self.id_key);
        let row_choice = Arc::new(RowChoice {
            fields: self
                .choices
                .iter()
                .map(|choice| (choice.name.clone(), choice.label.clone()))
                .collect(),
            every_row: self.require_all,
        });
        self.choices
            .iter()
            .map(|choice| FieldInfo {
                name: choice.name.clone(),
                label: choice.label.clone(),
                yields: FieldYield::StringArray,
                options: Some(Arc::clone(&ids)),
                required: false,
                row_choice: Some(Arc::clone(&row_choice)),
            })
            .collect()
    }

    fn render(mut self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let mut decided = BTreeMap::new();
        let mut errors = Vec::new();
        for choice in &self.choices {
            let state = node.field(&choice.name);
            for id in state.values.unwrap_or_default() {
                decided.entry(id).or_insert_with(|| choice.name.clone());
            }
            errors.extend(
                state
                    .error
                    .map(|error| format!("{}: {error}", choice.label)),
            );
        }
        let error = (!errors.is_empty()).then(|| errors.join(" "));
        let literal_rows = self.rows.take().unwrap_or_default();
        let rows = node.bound("rows").unwrap_or(&literal_rows);
        view! {
            <DecisionTableView node_id=node.id.to_owned() dom_id=node.dom_id() props=self rows
                query=node.ctx.query.clone() decided error meter=node.meter/>
        }
        .into_any()
    }
}

/// Turns the per-row radio pairs `_decide:<table>:<row id>=<field>` into `<field>=<row id>`; "No
/// decision" (an empty value) adds nothing. Other pairs pass unchanged, in order.
#[must_use]
pub fn decode_decisions(pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    pairs
        .into_iter()
        .filter_map(|(key, value)| match key.strip_prefix(DECISION_PREFIX) {
            None => Some((key, value)),
            Some(rest) => {
                let row = rest.split_once(':').map(|(_, row)| row.to_owned())?;
                (!value.is_empty()).then_some((value, row))
            }
        })
        .collect()
}

/// The radio group name of one row.
fn group_name(dom_id: &str, row_id: &str) -> String {
    format!("{DECISION_PREFIX}{dom_id}:{row_id}")
}

/// The table with a radio group per row.
#[expect(
    clippy::needless_pass_by_value,
    reason = "Leptos component props are owned"
)]
#[component]
pub fn DecisionTableView<'rows>(
    node_id: String,
    dom_id: String,
    props: DecisionTableProps,
    /// The rows, borrowed from the page data (the props' own `rows` are not read).
    rows: &'rows [Value],
    query: BTreeMap<String, String>,
    decided: BTreeMap<String, String>,
    error: Option<String>,
    /// The page's budget, charged for every row written.
    meter: &'rows Meter,
) -> impl IntoView {
    let columns = columns_or_keys(props.columns.clone(), rows);
    let page_size = rows_per_page(props.page_size);
    let window = Window::of(rows, &columns, &node_id, &query, page_size);
    let paged = rows.len() > page_size;
    let id_of = |row: &Value| row.get(&props.id_key).map(display_text).unwrap_or_default();
    let mut decided = decided;
    if !decided.is_empty() {
        let offered = row_id_set(rows, &props.id_key);
        decided.retain(|id, _| offered.contains(id));
    }
    let shown: Vec<String> = window
        .visible
        .iter()
        .map(|index| id_of(&rows[*index]))
        .collect();
    let carried: Vec<(String, String)> = decided
        .iter()
        .filter(|(id, _)| !shown.contains(id))
        .map(|(id, field)| (group_name(&dom_id, id), field.clone()))
        .collect();

    // (value, header): the choices, then "No decision" unless every row must be decided.
    let mut options: Vec<(String, String)> = props
        .choices
        .iter()
        .map(|choice| (choice.name.clone(), choice.label.clone()))
        .collect();
    if !props.require_all {
        options.push((String::new(), "No decision".to_owned()));
    }
    let tally: Vec<String> = props
        .choices
        .iter()
        .map(|choice| {
            let count = decided
                .values()
                .filter(|field| **field == choice.name)
                .count();
            format!("{}: {count}", choice.label)
        })
        .collect();
    let mut help = format!("Choose for each row. {}.", tally.join(" · "));
    if props.require_all {
        help.push_str(" Every row needs a choice.");
    }
    if paged {
        help.push_str(" Choices are kept when you search or change page.");
    }
    let described = Described::new(&dom_id, Some(&help), error.as_ref());
    let invalid = error.is_some();

    let choice_headers = options
        .iter()
        .map(|(_, label)| view! { <th scope="col" class="w-px whitespace-nowrap px-2 py-2 text-center text-sm font-semibold text-slate-900 dark:text-slate-100">{label.clone()}</th> })
        .collect_view();
    let headers = columns
        .iter()
        .map(|column| {
            let content = if paged {
                view! { <SortButton node_id=node_id.clone() column=column.clone() sort=window.sort.clone()/> }.into_any()
            } else {
                column.label.clone().into_any()
            };
            view! {
                <th scope="col" aria-sort=aria_sort(window.sort.as_ref(), &column.key) class="px-3 py-2 text-left text-sm font-semibold text-slate-900 dark:text-slate-100">{content}</th>
            }
        })
        .collect_view();

    let column_count = columns.len() + options.len();
    let body = if window.visible.is_empty() {
        let text = if window.search.is_empty() {
            "No rows".to_owned()
        } else {
            format!("No rows match “{}”.", window.search)
        };
        view! { <tr><td colspan=column_count.to_string() class="px-3 py-6 text-center text-sm italic text-slate-600 dark:text-slate-300">{text}</td></tr> }.into_any()
    } else {
        // Each row costs its cells (twice when cut: the short text and the whole) and a radio
        // with its label per option.
        let row_cost = |row: &Value| {
            let remaining = meter.remaining_bytes();
            2 * value_size(row, remaining) + options.len() * (RADIO_BYTES + 2 * id_of(row).len())
        };
        window
            .visible
            .iter()
            .take_while(|index| {
                meter.charge(BudgetLimit::Rows, 1)
                    && meter.charge(BudgetLimit::Bytes, row_cost(&rows[**index]))
            })
            .map(|index| {
                let row = &rows[*index];
                let id = id_of(row);
                let row_name = columns
                    .first()
                    .and_then(|column| row.get(&column.key))
                    .map(display_text)
                    .filter(|text| !text.is_empty())
                    .unwrap_or_else(|| id.clone());
                let current = decided.get(&id).cloned().unwrap_or_default();
                let name = group_name(&dom_id, &id);
                let radios = options
                    .iter()
                    .enumerate()
                    .map(|(position, (value, label))| {
                        let radio_id = format!("{dom_id}-{index}-{position}");
                        view! {
                            <td class="px-2 py-2 text-center">
                                <input id=radio_id.clone() type="radio" name=name.clone() value=value.clone()
                                    checked=*value == current required=props.require_all
                                    aria-invalid=invalid.then_some("true") class=TICK_CLASS/>
                                <label for=radio_id class="sr-only">{format!("{label}: {row_name}")}</label>
                            </td>
                        }
                    })
                    .collect_view();
                let cells = columns
                    .iter()
                    .map(|column| {
                        let text = row.get(&column.key).map(display_text).unwrap_or_default();
                        view! { <td class="px-3 py-2 align-top text-sm text-slate-800 dark:text-slate-200"><CellText text/></td> }
                    })
                    .collect_view();
                view! { <tr class="border-t border-slate-200 dark:border-slate-700" data-row=id>{radios}{cells}</tr> }
            })
            .collect_view()
            .into_any()
    };

    let label = props.label.clone();
    let search = paged.then(|| view! { <SearchBar node_id=node_id.clone() dom_id=dom_id.clone() label=label.to_lowercase() window=window.clone()/> });
    let pager = paged.then(|| view! { <Pager node_id=node_id.clone() dom_id=dom_id.clone() label=label.clone() window=window.clone()/> });
    view! {
        <fieldset id=dom_id.clone() class="space-y-2" aria-describedby=described.by() data-testid="decision-table">
            <legend class="text-sm font-medium text-slate-800 dark:text-slate-200">
                {props.label.clone()}
                <RequiredMark required=props.require_all/>
            </legend>
            <FieldNotes described=described.clone() help=Some(help) error=error/>
            {search}
            <div class="overflow-x-auto rounded-lg border border-slate-200 bg-white dark:border-slate-700 dark:bg-slate-800" tabindex="0" role="region" aria-label=label>
                <table class="min-w-full">
                    <thead class="bg-slate-50 dark:bg-slate-900"><tr>{choice_headers}{headers}</tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            {pager}
            <CarriedValues pairs=carried/>
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_decode_into_the_chosen_fields_and_no_decision_adds_nothing() {
        let pairs = vec![
            ("_csrf".to_owned(), "x".to_owned()),
            ("_decide:t-d:CLM-1".to_owned(), "approved_ids".to_owned()),
            ("_decide:t-d:CLM:2".to_owned(), "rejected_ids".to_owned()),
            ("_decide:t-d:CLM-3".to_owned(), String::new()),
        ];
        assert_eq!(
            decode_decisions(pairs),
            vec![
                ("_csrf".to_owned(), "x".to_owned()),
                ("approved_ids".to_owned(), "CLM-1".to_owned()),
                ("rejected_ids".to_owned(), "CLM:2".to_owned()),
            ]
        );
    }

    #[test]
    fn choices_must_be_distinct_fields() {
        let props: Result<DecisionTableProps, _> = serde_json::from_value(json!({
            "label": "x", "idKey": "id",
            "choices": [{"name": "a", "label": "A"}, {"name": "a", "label": "B"}]
        }));
        assert!(props.is_ok_and(|props| props.check().is_err()));
    }
}
