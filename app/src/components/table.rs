//! Table: rows of bound data with sortable columns, pagination and optional row selection.
//!
//! Sorting and paging are plain links (`?sort=<node>.<key>&dir=asc|desc`, `?page=<node>.<n>`)
//! read back from the render context's query, so they work without JavaScript and keep the rest of
//! the query string. Every table pages on the server: without `pageSize` a page shows
//! [`DEFAULT_PAGE_SIZE`] rows, so binding many tables to one big array cannot make a page of
//! every row (the render budget, [`crate::render::budget`], caps what is left). With
//! `selectable`, every row gets a tick box named `selectable.name` whose value is the row's
//! `idKey`: the table becomes an array-of-strings field. A selectable table
//! with more rows than a page (`pageSize`, default 50) is searched, sorted and paged through its
//! form instead ([`super::paging`]): ticks on other pages travel as hidden inputs, so every tick
//! reaches the submission. Long cell texts are cut, with the whole text one click away.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::paging::{
    aria_sort, row_id_set, CarriedValues, Pager, SearchBar, SortButton, Window, DEFAULT_PAGE_SIZE,
};
use super::selection_limit::SelectionLimit;
use super::table_rows::{table_body, Ticks};
use super::{
    check_name, display_text, encode_query_component, Described, FieldNotes, RequiredMark,
};
use crate::binding::BoundProps;
use crate::catalog::{ComponentProps, FieldInfo, FieldYield, Role};
use crate::render::{FieldState, Meter, NodeCtx};

/// One column.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TableColumn {
    /// The row object's key shown in this column.
    pub key: String,
    /// The column header.
    pub label: String,
}

/// Row selection: the table submits the ids of the ticked rows.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TableSelect {
    /// The form key, matching an array-of-strings field of the response schema.
    pub name: String,
    /// The row key whose value is submitted for a ticked row, such as "id".
    pub id_key: String,
    /// What selecting means, shown above the table, such as "Emails to archive".
    pub label: String,
    /// Whether at least one row must be ticked (the server checks it on submit).
    #[serde(default)]
    pub required: bool,
    /// The most rows that may be ticked (the schema's maxItems).
    #[serde(default)]
    pub max_items: Option<u32>,
}

/// Props of the `Table` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TableProps {
    /// The columns in order (default: every key of the first row).
    #[serde(default)]
    pub columns: Option<Vec<TableColumn>>,
    /// The rows: objects, always bound with {"$data": "/pointer"}.
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub rows: Option<Vec<Value>>,
    /// A short title read before the table, such as "Emails older than a year".
    #[serde(default)]
    pub caption: Option<String>,
    /// Make rows selectable with tick boxes; the table then submits the chosen row ids.
    #[serde(default)]
    pub selectable: Option<TableSelect>,
    /// Rows per page, 1 to 500 (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub page_size: Option<u32>,
    /// Whether headers are links that sort the rows (default true).
    #[serde(default = "sortable_default")]
    pub sortable: bool,
    /// What to show when there are no rows (default "No rows").
    #[serde(default)]
    pub empty_text: Option<String>,
}

fn sortable_default() -> bool {
    true
}

impl ComponentProps for TableProps {
    const NAME: &'static str = "Table";
    const ROLE: Role = Role::Display;
    const CAN_SUBMIT: bool = true;
    const DESCRIPTION: &'static str =
        "Rows in columns. With selectable, a field submitting ticked rows' idKey values.";
    const BY_REFERENCE: &'static [&'static str] = &["rows"];

    fn example() -> (Value, Value) {
        (
            json!({
                "caption": "Emails older than a year",
                "rows": {"$data": "/emails"},
                "columns": [{"key": "from", "label": "From"}, {"key": "subject", "label": "Subject"}, {"key": "date", "label": "Received"}],
                "selectable": {"name": "archive", "idKey": "id", "label": "Emails to archive", "required": true}
            }),
            json!({"emails": [
                {"id": "m1", "from": "news@example.com", "subject": "Weekly news", "date": "2023-01-04"},
                {"id": "m2", "from": "billing@example.com", "subject": "Invoice, January", "date": "2023-02-01"},
                {"id": "m3", "from": "team@example.com", "subject": "Offsite photos", "date": "2023-03-15"}
            ]}),
        )
    }

    fn check(&self) -> Result<(), String> {
        if let Some(selectable) = &self.selectable {
            check_name(&selectable.name)?;
        }
        check_page_size(self.page_size)
    }

    fn fields(&self, bound: &BoundProps<'_>) -> Vec<FieldInfo> {
        let Some(selectable) = self.selectable.as_ref() else {
            return Vec::new();
        };
        let options = row_ids(bound, self.rows.as_deref(), &selectable.id_key);
        vec![FieldInfo::new(
            &selectable.name,
            &selectable.label,
            FieldYield::StringArray,
            selectable.required,
        )
        .with_options(Some(options))]
    }

    fn render(mut self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let state = self
            .selectable
            .as_ref()
            .map(|selectable| node.field(&selectable.name))
            .unwrap_or_default();
        let literal_rows = self.rows.take().unwrap_or_default();
        let rows = node.bound("rows").unwrap_or(&literal_rows);
        view! { <TableView node_id=node.id.to_owned() dom_id=node.dom_id() props=self rows query=node.ctx.query.clone() state meter=node.meter/> }.into_any()
    }
}

/// The `id_key` value of every row, as text: the options of a table that submits row ids. The
/// rows are those `rows` is bound to, else the literal ones.
pub(crate) fn row_ids(
    bound: &BoundProps<'_>,
    literal: Option<&[Value]>,
    id_key: &str,
) -> Arc<[String]> {
    bound
        .rows("rows")
        .or(literal)
        .unwrap_or_default()
        .iter()
        .filter_map(|row| row.get(id_key))
        .map(display_text)
        .collect()
}

/// Sort direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Ascending,
    Descending,
}

/// Compares two cells: numbers numerically, everything else as case-insensitive text; empty last.
pub(crate) fn compare_cells(left: Option<&Value>, right: Option<&Value>) -> Ordering {
    let empty = |value: Option<&Value>| value.is_none_or(Value::is_null);
    match (empty(left), empty(right)) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        (false, false) => {}
    }
    let left = left.unwrap_or(&Value::Null);
    let right = right.unwrap_or(&Value::Null);
    match (left.as_f64(), right.as_f64()) {
        (Some(left), Some(right)) => left.partial_cmp(&right).unwrap_or(Ordering::Equal),
        _ => display_text(left)
            .to_lowercase()
            .cmp(&display_text(right).to_lowercase()),
    }
}

/// `?` plus the current query with `changes` applied (a `None` value removes the key).
fn query_link(query: &BTreeMap<String, String>, changes: &[(&str, Option<String>)]) -> String {
    let mut query = query.clone();
    for (key, value) in changes {
        match value {
            Some(value) => query.insert((*key).to_owned(), value.clone()),
            None => query.remove(*key),
        };
    }
    let pairs: Vec<String> = query
        .iter()
        .map(|(key, value)| {
            format!(
                "{}={}",
                encode_query_component(key),
                encode_query_component(value)
            )
        })
        .collect();
    format!("?{}", pairs.join("&"))
}

/// The columns to show: the props' columns, else every key of the first row.
pub(crate) fn columns_or_keys(
    columns: Option<Vec<TableColumn>>,
    rows: &[Value],
) -> Vec<TableColumn> {
    columns.unwrap_or_else(|| {
        rows.iter()
            .find_map(Value::as_object)
            .map(|first| {
                first
                    .keys()
                    .map(|key| TableColumn {
                        key: key.clone(),
                        label: key.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// Which rows a page shows and how the person moves: plain `GET` links, or (tables that submit
/// and have more rows than a page) the form's own navigation buttons.
enum Paging {
    Links {
        visible: Vec<usize>,
        sorted_by: Option<(String, Direction)>,
        page: usize,
        page_count: usize,
    },
    Form(Window),
}

fn link_paging(
    rows: &[Value],
    columns: &[TableColumn],
    props: &TableProps,
    node_id: &str,
    query: &BTreeMap<String, String>,
) -> Paging {
    // Sorting, from `?sort=<node>.<key>&dir=asc|desc`.
    let sort_prefix = format!("{node_id}.");
    let sorted_by: Option<(String, Direction)> = query
        .get("sort")
        .and_then(|sort| sort.strip_prefix(&sort_prefix))
        .filter(|key| props.sortable && columns.iter().any(|column| column.key == *key))
        .map(|key| {
            let direction = if query.get("dir").is_some_and(|dir| dir == "desc") {
                Direction::Descending
            } else {
                Direction::Ascending
            };
            (key.to_owned(), direction)
        });
    let mut order: Vec<usize> = (0..rows.len()).collect();
    if let Some((key, direction)) = &sorted_by {
        order.sort_by(|left, right| {
            let ordering = compare_cells(rows[*left].get(key), rows[*right].get(key));
            if *direction == Direction::Descending {
                ordering.reverse()
            } else {
                ordering
            }
        });
    }
    // Paging, from `?page=<node>.<n>`.
    let page_size = rows_per_page(props.page_size);
    let page_count = rows.len().div_ceil(page_size).max(1);
    let page = query
        .get("page")
        .and_then(|page| page.strip_prefix(&sort_prefix))
        .and_then(|number| number.parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, page_count);
    let visible: Vec<usize> = order
        .into_iter()
        .skip((page - 1) * page_size)
        .take(page_size)
        .collect();
    Paging::Links {
        visible,
        sorted_by,
        page,
        page_count,
    }
}

/// Checks a table's `pageSize`: 1 to 500 rows when given.
pub(crate) fn check_page_size(page_size: Option<u32>) -> Result<(), String> {
    if page_size.is_some_and(|size| !(1..=500).contains(&size)) {
        return Err("`pageSize` must be between 1 and 500".to_owned());
    }
    Ok(())
}

/// Rows per page of a table: its `pageSize`, else [`DEFAULT_PAGE_SIZE`].
pub(crate) fn rows_per_page(page_size: Option<u32>) -> usize {
    page_size.map_or(DEFAULT_PAGE_SIZE, |size| {
        usize::try_from(size).unwrap_or(usize::MAX).max(1)
    })
}

/// The `<table>` with its caption, headers, rows, selection boxes and page links.
#[expect(
    clippy::needless_pass_by_value,
    reason = "Leptos component props are owned"
)]
#[expect(
    clippy::too_many_lines,
    reason = "one view: headers, rows, search and pager share their state"
)]
#[component]
pub fn TableView<'rows>(
    node_id: String,
    dom_id: String,
    props: TableProps,
    /// The rows, borrowed from the page data (the props' own `rows` are not read).
    rows: &'rows [Value],
    query: BTreeMap<String, String>,
    state: FieldState,
    /// The page's budget, charged for every row written.
    meter: &'rows Meter,
) -> impl IntoView {
    let columns = columns_or_keys(props.columns.clone(), rows);
    let page_size = rows_per_page(props.page_size);
    let paging = if props.selectable.is_some() && rows.len() > page_size {
        Paging::Form(Window::of(rows, &columns, &node_id, &query, page_size))
    } else {
        link_paging(rows, &columns, &props, &node_id, &query)
    };

    let selectable = props.selectable;
    let mut selected: Vec<String> = state.values.clone().unwrap_or_default();
    if let (Some(selectable), false) = (&selectable, selected.is_empty()) {
        let offered = row_id_set(rows, &selectable.id_key);
        selected.retain(|id| offered.contains(id));
    }
    let described = Described::new(&dom_id, None, state.error.as_ref());
    let described_by = described.by();
    let invalid = state.error.is_some();
    let column_count = columns.len() + usize::from(selectable.is_some());
    let region_label = props.caption.clone().unwrap_or_else(|| "Table".to_owned());

    let headers = columns
        .iter()
        .map(|column| {
            let (aria, content) = match &paging {
                Paging::Form(window) => {
                    let aria = aria_sort(window.sort.as_ref(), &column.key);
                    let content = if props.sortable {
                        view! { <SortButton node_id=node_id.clone() column=column.clone() sort=window.sort.clone()/> }.into_any()
                    } else {
                        column.label.clone().into_any()
                    };
                    (aria, content)
                }
                Paging::Links { sorted_by, .. } => {
                    let current = sorted_by.as_ref().filter(|(key, _)| *key == column.key).map(|(_, direction)| *direction);
                    let aria = current.map(|direction| if direction == Direction::Ascending { "ascending" } else { "descending" });
                    let label = column.label.clone();
                    let content = if props.sortable {
                        let next = if current == Some(Direction::Ascending) { "desc" } else { "asc" };
                        let href = query_link(
                            &query,
                            &[("sort", Some(format!("{node_id}.{}", column.key))), ("dir", Some(next.to_owned())), ("page", None)],
                        );
                        let arrow = match current {
                            Some(Direction::Ascending) => "\u{25b2}",
                            Some(Direction::Descending) => "\u{25bc}",
                            None => "\u{2195}",
                        };
                        let hint = if next == "desc" { ", sort descending" } else { ", sort ascending" };
                        view! {
                            <a href=href class="inline-flex items-center gap-1 text-slate-900 underline-offset-2 hover:underline focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:text-slate-100">
                                {label}
                                <span class="sr-only">{hint}</span>
                                <span aria-hidden="true" class="text-xs text-slate-600 dark:text-slate-300">{arrow}</span>
                            </a>
                        }
                        .into_any()
                    } else {
                        label.into_any()
                    };
                    (aria, content)
                }
            };
            view! {
                <th scope="col" aria-sort=aria class="px-3 py-2 text-left text-sm font-semibold text-slate-900 dark:text-slate-100">
                    {content}
                </th>
            }
        })
        .collect_view();

    let visible: Vec<usize> = match &paging {
        Paging::Links { visible, .. } => visible.clone(),
        Paging::Form(window) => window.visible.clone(),
    };
    // Ticks on rows this page does not show ride along as hidden inputs.
    let carried: Vec<(String, String)> = match (&paging, &selectable) {
        (Paging::Form(_), Some(selectable)) => {
            let shown: Vec<String> = visible
                .iter()
                .filter_map(|index| rows[*index].get(&selectable.id_key))
                .map(display_text)
                .collect();
            selected
                .iter()
                .filter(|id| !shown.contains(id))
                .map(|id| (selectable.name.clone(), id.clone()))
                .collect()
        }
        _ => Vec::new(),
    };

    let empty_text = match &paging {
        Paging::Form(window) if !window.search.is_empty() => {
            format!("No rows match “{}”.", window.search)
        }
        _ => props
            .empty_text
            .clone()
            .unwrap_or_else(|| "No rows".to_owned()),
    };
    let ticks = selectable.as_ref().map(|selectable| Ticks {
        name: &selectable.name,
        id_key: &selectable.id_key,
        selected: &selected,
        invalid,
        described_by: described_by.as_deref(),
        dom_id: &dom_id,
    });
    let body = table_body(
        rows,
        &visible,
        &columns,
        ticks.as_ref(),
        &empty_text,
        column_count,
        meter,
    );

    let caption_id = format!("{dom_id}-caption");
    let (search_bar, pager) = match &paging {
        Paging::Form(window) => (
            Some(view! { <SearchBar node_id=node_id.clone() dom_id=dom_id.clone() label=region_label.to_lowercase() window=window.clone()/> }),
            Some(view! { <Pager node_id=node_id.clone() dom_id=dom_id.clone() label=region_label.clone() window=window.clone()/> }.into_any()),
        ),
        Paging::Links { page, page_count, .. } => {
            let (page, page_count) = (*page, *page_count);
            let pager = (page_count > 1).then(|| {
                let link = |target: usize| query_link(&query, &[("page", Some(format!("{node_id}.{target}")))]);
                let previous = (page > 1).then(|| link(page - 1));
                let next = (page < page_count).then(|| link(page + 1));
                const PAGE_LINK: &str = "rounded-md border border-slate-400 px-3 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:text-slate-100 dark:hover:bg-slate-700";
                view! {
                    <nav aria-label=format!("Pages of {region_label}") class="flex items-center gap-3 pt-2">
                        {previous.map(|href| view! { <a href=href class=PAGE_LINK rel="prev">"Previous"</a> })}
                        <span class="text-sm text-slate-700 dark:text-slate-300" aria-current="page">
                            {format!("Page {page} of {page_count}")}
                        </span>
                        {next.map(|href| view! { <a href=href class=PAGE_LINK rel="next">"Next"</a> })}
                    </nav>
                }
                .into_any()
            });
            (None, pager)
        }
    };

    let table = view! {
        {search_bar}
        <div class="overflow-x-auto rounded-lg border border-slate-200 bg-white focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:border-slate-700 dark:bg-slate-800" tabindex="0" role="region" aria-label=region_label.clone()>
            <table class="min-w-full">
                {props
                    .caption
                    .map(|caption| {
                        view! { <caption id=caption_id class="px-3 pt-3 text-left font-semibold text-slate-900 dark:text-slate-100">{caption}</caption> }
                    })}
                // A header row needs a cell: a table with no columns yet (no rows to infer
                // them from) has no header at all.
                {(column_count > 0).then(|| view! {
                    <thead class="bg-slate-50 dark:bg-slate-900">
                        <tr>
                            {selectable
                                .as_ref()
                                .map(|_| view! { <th scope="col" class="w-px whitespace-nowrap px-3 py-2 text-left text-sm font-semibold text-slate-900 dark:text-slate-100">"Select"</th> })}
                            {headers}
                        </tr>
                    </thead>
                }
                .into_any())}
                {body}
            </table>
        </div>
        {pager}
    };

    match selectable {
        Some(selectable) => {
            let paged = matches!(paging, Paging::Form(_));
            let help = selection_help(selected.len(), selectable.max_items, paged);
            let described = Described::new(&dom_id, help.as_ref(), state.error.as_ref());
            let limit = selectable.max_items.map(|most| most.to_string());
            view! {
                <fieldset id=dom_id.clone() class="space-y-2" aria-describedby=described.by()
                    data-selection=selectable.name.clone() data-max-items=limit>
                    <legend class="text-sm font-medium text-slate-800 dark:text-slate-200">
                        {selectable.label}
                        <RequiredMark required=selectable.required/>
                    </legend>
                    {match selectable.max_items {
                        Some(max) => view! {
                            <SelectionLimit fieldset_id=dom_id.clone() name=selectable.name.clone() max
                                initial=selected.len() paged help_id=described.help_id.clone().unwrap_or_default()/>
                        }
                        .into_any(),
                        None => view! { <FieldNotes described=described.clone() help error=None/> }.into_any(),
                    }}
                    {table}
                    <CarriedValues pairs=carried/>
                    <FieldNotes described=Described { help_id: None, error_id: described.error_id.clone() } help=None error=state.error/>
                </fieldset>
            }
            .into_any()
        }
        None => view! { <div id=dom_id class="space-y-2">{table}</div> }.into_any(),
    }
}

/// The line under a selection's legend: how many are ticked, the limit, and that ticks survive
/// paging.
fn selection_help(selected: usize, max_items: Option<u32>, paged: bool) -> Option<String> {
    let mut help = match max_items {
        Some(most) => format!("{selected} selected (at most {most})."),
        None if paged => format!("{selected} selected."),
        None => return None,
    };
    if paged {
        help.push_str(" Ticks are kept when you search or change page.");
    }
    Some(help)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_sort_numbers_numerically_and_empty_cells_last() {
        assert_eq!(
            compare_cells(Some(&json!(9)), Some(&json!(10))),
            Ordering::Less
        );
        assert_eq!(
            compare_cells(Some(&json!("b")), Some(&json!("A"))),
            Ordering::Greater
        );
        assert_eq!(compare_cells(None, Some(&json!("a"))), Ordering::Greater);
        assert_eq!(compare_cells(Some(&Value::Null), None), Ordering::Equal);
    }

    #[test]
    fn query_links_keep_other_parameters_and_encode_values() {
        let query = BTreeMap::from([
            ("tab".to_owned(), "a b".to_owned()),
            ("page".to_owned(), "t.2".to_owned()),
        ]);
        assert_eq!(
            query_link(
                &query,
                &[("sort", Some("t.name".to_owned())), ("page", None)]
            ),
            "?sort=t.name&tab=a%20b"
        );
    }
}
