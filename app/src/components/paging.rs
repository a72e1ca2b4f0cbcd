//! Server-side search, sort and paging for the tables that submit (a selectable Table and the
//! `DecisionTable`), so a selection over thousands of rows is one page of rows, without JavaScript.
//!
//! The controls are submit buttons of the page's own form, named [`NAV_FIELD`]. Pressing one
//! POSTs every field of the form: the page handler sees [`NAV_FIELD`], re-renders the page with
//! the person's values and the state [`navigation_query`] reads, and records nothing. So ticks on
//! other pages travel in the form (as hidden inputs, [`CarriedValues`]) and the final submission
//! carries every one; `GET` stays free of side effects, and a paging POST is never the answer.
//!
//! The table's state lives in form fields named `_t.<node>.<key>` (`q` the search, `qprev` the
//! search the rows were filtered by, `sort` a column key with `-` for descending, `page`); a
//! button's value (`<node>.<key>=<value>` lines) overrides them. A changed search starts again on
//! page 1. The same keys work in a `GET` query string (without the `_t.` prefix).

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use leptos::either::Either;
use leptos::prelude::*;
use serde_json::Value;

use super::display_text;
use super::table::{compare_cells, TableColumn};

/// The form key of the navigation buttons.
pub const NAV_FIELD: &str = "_nav";
/// The prefix of the form keys that hold a table's state.
pub const STATE_PREFIX: &str = "_t.";
/// Rows per page of a table that submits, when its props do not say.
pub const DEFAULT_PAGE_SIZE: usize = 50;
/// Cell texts longer than this many characters are cut, with the full text one click away.
pub const CELL_CHARS: usize = 80;

/// The render query a navigation POST asks for, or `None` when `pairs` is a real submission:
/// every `_t.<key>` field, then the pressed button's `<key>=<value>` lines.
#[must_use]
pub fn navigation_query(pairs: &[(String, String)]) -> Option<BTreeMap<String, String>> {
    let pressed = pairs
        .iter()
        .rev()
        .find(|(key, _)| key == NAV_FIELD)
        .map(|(_, value)| value)?;
    let mut query = state_query(pairs);
    for line in pressed.lines() {
        if let Some((key, value)) = line.split_once('=') {
            query.insert(key.to_owned(), value.to_owned());
        }
    }
    Some(query)
}

/// Every `_t.<key>` field of a submission as a render query (the last value of a key wins), so a
/// page shown again after a 422 keeps its tables' search, sort and page.
#[must_use]
pub fn state_query(pairs: &[(String, String)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .filter_map(|(key, value)| {
            key.strip_prefix(STATE_PREFIX)
                .map(|key| (key.to_owned(), value.clone()))
        })
        .collect()
}

/// Which rows of a table one page shows, after search and sort.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// Indexes into the rows, in display order.
    pub visible: Vec<usize>,
    /// The page shown, from 1.
    pub page: usize,
    /// How many pages the matching rows fill (at least 1).
    pub page_count: usize,
    /// Rows that match the search.
    pub matching: usize,
    /// All rows.
    pub total: usize,
    /// The search text.
    pub search: String,
    /// The sort column and whether it is descending.
    pub sort: Option<(String, bool)>,
}

impl Window {
    /// The rows `node_id` shows: filtered by the search over `columns`' text, sorted, then paged.
    #[must_use]
    pub fn of(
        rows: &[Value],
        columns: &[TableColumn],
        node_id: &str,
        query: &BTreeMap<String, String>,
        page_size: usize,
    ) -> Self {
        let get = |key: &str| query.get(&format!("{node_id}.{key}")).map(|v| v.trim());
        let search = get("q").unwrap_or_default().to_owned();
        let needle = search.to_lowercase();
        let mut order: Vec<usize> = (0..rows.len())
            .filter(|index| {
                needle.is_empty()
                    || columns.iter().any(|column| {
                        rows[*index]
                            .get(&column.key)
                            .is_some_and(|cell| display_text(cell).to_lowercase().contains(&needle))
                    })
            })
            .collect();
        let sort = get("sort")
            .filter(|sort| !sort.is_empty())
            .map(|sort| match sort.strip_prefix('-') {
                Some(key) => (key.to_owned(), true),
                None => (sort.to_owned(), false),
            })
            .filter(|(key, _)| columns.iter().any(|column| column.key == *key));
        if let Some((key, descending)) = &sort {
            order.sort_by(|left, right| {
                let ordering: Ordering = compare_cells(rows[*left].get(key), rows[*right].get(key));
                if *descending {
                    ordering.reverse()
                } else {
                    ordering
                }
            });
        }
        let page_size = page_size.max(1);
        let matching = order.len();
        let page_count = matching.div_ceil(page_size).max(1);
        let searched_before = get("qprev").unwrap_or_default();
        let page = if searched_before == search {
            get("page")
                .and_then(|page| page.parse::<usize>().ok())
                .unwrap_or(1)
        } else {
            1
        }
        .clamp(1, page_count);
        let visible = order
            .into_iter()
            .skip((page - 1) * page_size)
            .take(page_size)
            .collect();
        Self {
            visible,
            page,
            page_count,
            matching,
            total: rows.len(),
            search,
            sort,
        }
    }
}

/// The form key of one of a table's state fields.
fn state_key(node_id: &str, key: &str) -> String {
    format!("{STATE_PREFIX}{node_id}.{key}")
}

const NAV_BUTTON: &str = "rounded-md border border-slate-400 bg-white px-3 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:bg-slate-800 dark:text-slate-100 dark:hover:bg-slate-700";
const SMALL_INPUT: &str = "rounded-md border border-slate-400 bg-white px-2 py-1 text-sm text-slate-900 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:bg-slate-800 dark:text-slate-100";

/// The search box above a paged table; its button also applies a typed page number, so Enter in
/// any box of the form (which presses the form's first button) navigates and loses nothing.
#[expect(
    clippy::needless_pass_by_value,
    reason = "Leptos component props are owned"
)]
#[component]
pub fn SearchBar(node_id: String, dom_id: String, label: String, window: Window) -> impl IntoView {
    let input_id = format!("{dom_id}-search");
    let clear = (!window.search.is_empty()).then(|| {
        let value = format!("{node_id}.q=\n{node_id}.page=1");
        view! { <button type="submit" name=NAV_FIELD value=value class=NAV_BUTTON>"Clear search"</button> }
    });
    let found = if window.search.is_empty() {
        format!("{} rows", window.total)
    } else {
        format!(
            "{} of {} rows match “{}”",
            window.matching, window.total, window.search
        )
    };
    view! {
        <div class="flex flex-wrap items-end gap-2 pt-2" data-testid="table-search">
            <div>
                <label for=input_id.clone() class="block text-sm font-medium text-slate-800 dark:text-slate-200">{format!("Search {label}")}</label>
                <input id=input_id type="search" name=state_key(&node_id, "q") value=window.search.clone() class=SMALL_INPUT/>
            </div>
            <input type="hidden" name=state_key(&node_id, "qprev") value=window.search.clone()/>
            <button type="submit" name=NAV_FIELD value="" class=NAV_BUTTON>"Search"</button>
            {clear}
            <p class="pb-1 text-sm text-slate-700 dark:text-slate-300" role="status">{found}</p>
        </div>
    }
}

/// A column header that sorts the rows through a navigation POST.
#[expect(
    clippy::needless_pass_by_value,
    reason = "Leptos component props are owned"
)]
#[component]
pub fn SortButton(
    node_id: String,
    column: TableColumn,
    sort: Option<(String, bool)>,
) -> impl IntoView {
    let current = sort
        .filter(|(key, _)| *key == column.key)
        .map(|(_, descending)| descending);
    let next_descending = current == Some(false);
    let value = format!(
        "{node_id}.sort={}{}\n{node_id}.page=1",
        if next_descending { "-" } else { "" },
        column.key
    );
    let arrow = match current {
        Some(false) => "\u{25b2}",
        Some(true) => "\u{25bc}",
        None => "\u{2195}",
    };
    let hint = if next_descending {
        ", sort descending"
    } else {
        ", sort ascending"
    };
    view! {
        <button type="submit" name=NAV_FIELD value=value
            class="inline-flex items-center gap-1 font-semibold text-slate-900 underline-offset-2 hover:underline focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:text-slate-100">
            {column.label}
            <span class="sr-only">{hint}</span>
            <span aria-hidden="true" class="text-xs text-slate-600 dark:text-slate-300">{arrow}</span>
        </button>
    }
}

/// The `aria-sort` value of a column.
#[must_use]
pub fn aria_sort(sort: Option<&(String, bool)>, key: &str) -> Option<&'static str> {
    sort.filter(|(sorted, _)| sorted == key)
        .map(|(_, descending)| {
            if *descending {
                "descending"
            } else {
                "ascending"
            }
        })
}

/// The ids of `rows` under `id_key`, for keeping a re-rendered table's values to its own rows:
/// an id the page never offered (a crafted answer, refused with a message naming it) is dropped
/// rather than carried into the next submission, where it would be refused again with no control
/// the person could untick.
#[must_use]
pub fn row_id_set(rows: &[Value], id_key: &str) -> HashSet<String> {
    rows.iter()
        .filter_map(|row| row.get(id_key))
        .map(display_text)
        .collect()
}

/// Previous / page number / Next under a paged table, and the hidden sort it keeps.
#[expect(
    clippy::needless_pass_by_value,
    reason = "Leptos component props are owned"
)]
#[component]
pub fn Pager(node_id: String, dom_id: String, label: String, window: Window) -> impl IntoView {
    let sort_value = window
        .sort
        .as_ref()
        .map(|(key, descending)| format!("{}{key}", if *descending { "-" } else { "" }))
        .unwrap_or_default();
    let page_id = format!("{dom_id}-page");
    let go = |target: usize| format!("{node_id}.page={target}");
    let previous = (window.page > 1).then(|| go(window.page - 1));
    let next = (window.page < window.page_count).then(|| go(window.page + 1));
    view! {
        <input type="hidden" name=state_key(&node_id, "sort") value=sort_value/>
        <nav aria-label=format!("Pages of {label}") class="flex flex-wrap items-center gap-2 pt-2" data-testid="table-pager">
            {previous.map(|value| view! { <button type="submit" name=NAV_FIELD value=value class=NAV_BUTTON>"Previous"</button> })}
            <label for=page_id.clone() class="text-sm text-slate-700 dark:text-slate-300">"Page"</label>
            <input id=page_id type="number" min="1" max=window.page_count.to_string() name=state_key(&node_id, "page")
                value=window.page.to_string() class=format!("w-20 {SMALL_INPUT}")/>
            <span class="text-sm text-slate-700 dark:text-slate-300">{format!("of {}", window.page_count)}</span>
            <button type="submit" name=NAV_FIELD value="" class=NAV_BUTTON>"Go"</button>
            {next.map(|value| view! { <button type="submit" name=NAV_FIELD value=value class=NAV_BUTTON>"Next"</button> })}
        </nav>
    }
}

/// Hidden inputs carrying values of rows the page does not show (ticks or decisions made on
/// other pages or hidden by the search), so they reach the final submission.
#[component]
pub fn CarriedValues(pairs: Vec<(String, String)>) -> impl IntoView {
    pairs
        .into_iter()
        .map(|(name, value)| view! { <input type="hidden" name=name value=value/> })
        .collect_view()
}

/// A cell's text; long text is cut with the whole of it in a `<details>` one click away.
#[component]
pub fn CellText(text: String) -> impl IntoView {
    // The short case stays a plain text node (no boxed view).
    let Some(short) = cut_cell(&text) else {
        return Either::Left(text);
    };
    Either::Right(view! {
        <details class="max-w-prose">
            <summary class="cursor-pointer">{short}</summary>
            <p class="mt-1 whitespace-pre-wrap">{text}</p>
        </details>
    })
}

/// What a cell shows of `text` longer than [`CELL_CHARS`] characters (its start and "…"), or
/// `None` when the whole of it fits.
#[must_use]
pub fn cut_cell(text: &str) -> Option<String> {
    // Only text longer than CELL_CHARS bytes can be longer than CELL_CHARS characters.
    if text.len() <= CELL_CHARS || text.chars().nth(CELL_CHARS).is_none() {
        return None;
    }
    let short: String = text.chars().take(CELL_CHARS).collect();
    Some(format!("{}…", short.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_body_without_the_nav_button_is_a_submission() {
        assert_eq!(
            navigation_query(&pairs(&[("_t.c1.page", "3"), ("ids", "a")])),
            None
        );
    }

    #[test]
    fn the_pressed_button_overrides_the_carried_state() {
        let query = navigation_query(&pairs(&[
            ("_t.c1.page", "3"),
            ("_t.c1.q", "x"),
            ("_nav", "c1.page=4\nc1.sort=-name"),
        ]));
        let expected = BTreeMap::from([
            ("c1.page".to_owned(), "4".to_owned()),
            ("c1.q".to_owned(), "x".to_owned()),
            ("c1.sort".to_owned(), "-name".to_owned()),
        ]);
        assert_eq!(query, Some(expected));
    }

    fn rows() -> Vec<Value> {
        (1..=120)
            .map(|n| json!({"id": format!("r{n}"), "name": format!("Row {n}")}))
            .collect()
    }

    fn columns() -> Vec<TableColumn> {
        vec![TableColumn {
            key: "name".to_owned(),
            label: "Name".to_owned(),
        }]
    }

    #[test]
    fn a_search_filters_by_text_and_a_new_search_starts_on_page_one() {
        let query = BTreeMap::from([
            ("t.q".to_owned(), "row 1".to_owned()),
            ("t.page".to_owned(), "3".to_owned()),
        ]);
        let window = Window::of(&rows(), &columns(), "t", &query, 10);
        // "Row 1", "Row 10".."Row 19", "Row 100".."Row 120": 32 rows.
        assert_eq!(window.matching, 32);
        assert_eq!(window.page, 1);
        assert_eq!(window.page_count, 4);
    }

    #[test]
    fn sort_and_page_pick_the_right_rows() {
        let query = BTreeMap::from([
            ("t.sort".to_owned(), "-name".to_owned()),
            ("t.page".to_owned(), "2".to_owned()),
        ]);
        let window = Window::of(&rows(), &columns(), "t", &query, 50);
        assert_eq!(window.page, 2);
        assert_eq!(window.visible.len(), 50);
        // Text sort descending: "Row 99" first on page 1; page 2 starts 50 rows later.
        let first = window.visible.first().copied().unwrap_or_default();
        assert_ne!(first, 98);
        assert_eq!(window.page_count, 3);
    }
}
