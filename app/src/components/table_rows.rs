//! A Table's body: its rows written straight from the page data into one inert `<tbody>`.
//!
//! A table shows up to thousands of rows of plain text, with nothing in them that reacts: no
//! signal, no island, no event. Built as typed views, each cell costs an owned copy of its text,
//! a boxed view and its attributes formatted one by one, several times what the markup itself
//! costs to write. Leptos has a view for exactly this case, [`InertElement`] (what `view!` makes
//! of markup with nothing dynamic in it); the rows are written into one, reading each cell where
//! it is in the data and escaping it on the way into the buffer. The header, caption, search,
//! pager and fieldset around it stay typed views.
//!
//! Escaping here is the whole defence against markup in the data, so every piece of data goes
//! through [`push_text`] or [`push_attribute`] and nothing else.

use std::fmt::Write as _;

use leptos::tachys::html::InertElement;
use serde_json::Value;

use super::paging::cut_cell;
use super::table::TableColumn;
use super::{display_text, TICK_CLASS};
use crate::escape::{push_attribute, push_text};
use crate::render::budget::{BudgetLimit, Meter};

const ROW_CLASS: &str = "border-t border-slate-200 dark:border-slate-700";
const CELL_CLASS: &str = "px-3 py-2 align-top text-sm text-slate-800 dark:text-slate-200";
const EMPTY_CLASS: &str = "px-3 py-6 text-center text-sm italic text-slate-600 dark:text-slate-300";
/// About what one row of four short columns takes, so the buffer rarely grows.
const BYTES_PER_CELL: usize = 100;

/// The tick box each row of a selectable table starts with.
pub(crate) struct Ticks<'a> {
    /// The form key the ticked rows' ids are submitted under.
    pub name: &'a str,
    /// The row key whose value a tick submits.
    pub id_key: &'a str,
    /// The ids ticked when the page was last submitted.
    pub selected: &'a [String],
    /// Whether the field's last submission was refused.
    pub invalid: bool,
    /// The ids of the help and error texts describing every tick box.
    pub described_by: Option<&'a str>,
    /// The table's DOM id, from which each box's id is made.
    pub dom_id: &'a str,
}

/// The `<tbody>` holding `rows[index]` for each of `visible`, or one row saying `empty` across
/// all `column_count` columns when nothing is visible. Each row written is charged to `meter`
/// (a row and its bytes); the rows stop at the first overrun.
pub(crate) fn table_body(
    rows: &[Value],
    visible: &[usize],
    columns: &[TableColumn],
    ticks: Option<&Ticks<'_>>,
    empty: &str,
    column_count: usize,
    meter: &Meter,
) -> InertElement {
    let cells = visible.len() * (columns.len() + usize::from(ticks.is_some()));
    let mut out = String::with_capacity(64 + cells * BYTES_PER_CELL);
    out.push_str("<tbody>");
    if visible.is_empty() {
        let _ = write!(
            out,
            "<tr><td colspan=\"{}\" class=\"{EMPTY_CLASS}\">",
            column_count.max(1)
        );
        push_text(&mut out, empty);
        out.push_str("</td></tr>");
    }
    for &index in visible {
        let Some(row) = rows.get(index) else {
            continue;
        };
        if !meter.charge(BudgetLimit::Rows, 1) {
            break;
        }
        let row_start = out.len();
        let _ = write!(out, "<tr class=\"{ROW_CLASS}\">");
        if let Some(ticks) = ticks {
            push_tick(&mut out, ticks, row, index, columns);
        }
        for column in columns {
            let _ = write!(out, "<td class=\"{CELL_CLASS}\">");
            push_cell(&mut out, row.get(&column.key));
            out.push_str("</td>");
        }
        out.push_str("</tr>");
        if !meter.charge(BudgetLimit::Bytes, out.len() - row_start) {
            out.truncate(row_start);
            break;
        }
    }
    out.push_str("</tbody>");
    InertElement::new(out)
}

/// The cell holding row `index`'s tick box and its label, "Select" and the row's first column
/// (its id when that is empty).
fn push_tick(
    out: &mut String,
    ticks: &Ticks<'_>,
    row: &Value,
    index: usize,
    columns: &[TableColumn],
) {
    let value = row.get(ticks.id_key).map(display_text).unwrap_or_default();
    let box_id = format!("{}-row-{index}", ticks.dom_id);
    out.push_str("<td class=\"px-3 py-2\"><input id=\"");
    push_attribute(out, &box_id);
    out.push_str("\" type=\"checkbox\" name=\"");
    push_attribute(out, ticks.name);
    out.push_str("\" value=\"");
    push_attribute(out, &value);
    out.push('"');
    if ticks.selected.contains(&value) {
        out.push_str(" checked");
    }
    if ticks.invalid {
        out.push_str(" aria-invalid=\"true\"");
    }
    if let Some(described_by) = ticks.described_by {
        out.push_str(" aria-describedby=\"");
        push_attribute(out, described_by);
        out.push('"');
    }
    let _ = write!(out, " class=\"{TICK_CLASS}\"><label for=\"");
    push_attribute(out, &box_id);
    out.push_str("\" class=\"sr-only\">Select ");
    match columns
        .first()
        .and_then(|column| row.get(&column.key))
        .map(display_text)
        .filter(|text| !text.is_empty())
    {
        Some(name) => push_text(out, &name),
        None => push_text(out, &value),
    }
    out.push_str("</label></td>");
}

/// A cell's text as [`super::paging::CellText`] shows it: long text cut, the whole of it one
/// click away. Strings, numbers and flags are written from where they are, without a copy.
fn push_cell(out: &mut String, value: Option<&Value>) {
    match value {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => push_cut(out, text),
        Some(Value::Bool(flag)) => out.push_str(if *flag { "true" } else { "false" }),
        Some(Value::Number(number)) => {
            let _ = write!(out, "{number}");
        }
        Some(other) => push_cut(out, &display_text(other)),
    }
}

fn push_cut(out: &mut String, text: &str) {
    match cut_cell(text) {
        None => push_text(out, text),
        Some(short) => {
            out.push_str("<details class=\"max-w-prose\"><summary class=\"cursor-pointer\">");
            push_text(out, &short);
            out.push_str("</summary><p class=\"mt-1 whitespace-pre-wrap\">");
            push_text(out, text);
            out.push_str("</p></details>");
        }
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use leptos::prelude::RenderHtml;
    use serde_json::json;

    use super::*;
    use crate::render::budget::RenderBudget;

    fn meter() -> Meter {
        Meter::new(RenderBudget::DEFAULT)
    }

    fn columns(keys: &[&str]) -> Vec<TableColumn> {
        keys.iter()
            .map(|key| TableColumn {
                key: (*key).to_owned(),
                label: (*key).to_owned(),
            })
            .collect()
    }

    #[test]
    fn markup_in_the_data_is_written_as_text_everywhere() {
        let rows = vec![json!({"id": "\"><script>x</script>", "from": "<b>Ada</b> & co"})];
        let selected = Vec::new();
        let ticks = Ticks {
            name: "ids",
            id_key: "id",
            selected: &selected,
            invalid: false,
            described_by: None,
            dom_id: "t-c1",
        };
        let html = table_body(
            &rows,
            &[0],
            &columns(&["from"]),
            Some(&ticks),
            "",
            2,
            &meter(),
        )
        .to_html();
        assert!(
            !html.contains("<script>") && !html.contains("<b>"),
            "{html}"
        );
        assert!(
            html.contains("value=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;\""),
            "{html}"
        );
        assert!(
            html.contains(">&lt;b&gt;Ada&lt;/b&gt; &amp; co</td>"),
            "{html}"
        );
        assert!(
            html.contains("Select &lt;b&gt;Ada&lt;/b&gt; &amp; co</label>"),
            "{html}"
        );
    }

    #[test]
    fn ticked_rows_stay_ticked_and_a_refused_field_marks_every_box() {
        let rows = vec![json!({"id": 1, "n": 2.5}), json!({"id": 2, "n": true})];
        let selected = vec!["2".to_owned()];
        let ticks = Ticks {
            name: "ids",
            id_key: "id",
            selected: &selected,
            invalid: true,
            described_by: Some("t-c1-error"),
            dom_id: "t-c1",
        };
        let html = table_body(
            &rows,
            &[1, 0],
            &columns(&["n"]),
            Some(&ticks),
            "",
            2,
            &meter(),
        )
        .to_html();
        let second =
            html.find("value=\"2\" checked aria-invalid=\"true\" aria-describedby=\"t-c1-error\"");
        let first = html.find("value=\"1\" aria-invalid=\"true\"");
        assert!(
            matches!((second, first), (Some(a), Some(b)) if a < b),
            "{html}"
        );
        assert!(
            html.contains(">true</td>") && html.contains(">2.5</td>"),
            "{html}"
        );
        assert!(
            html.contains("id=\"t-c1-row-1\"") && html.contains("for=\"t-c1-row-0\""),
            "{html}"
        );
    }

    #[test]
    fn long_text_is_cut_and_no_rows_say_so_across_the_table() {
        let long = "word ".repeat(40);
        let rows = vec![json!({"note": long, "tags": ["a", "b"]})];
        let html = table_body(
            &rows,
            &[0],
            &columns(&["note", "tags"]),
            None,
            "",
            2,
            &meter(),
        )
        .to_html();
        assert!(
            html.contains("<summary class=\"cursor-pointer\">"),
            "{html}"
        );
        assert!(
            html.contains("…</summary>") && html.contains(">a, b</td>"),
            "{html}"
        );
        let empty = table_body(
            &rows,
            &[],
            &columns(&["note"]),
            None,
            "No <rows>",
            3,
            &meter(),
        )
        .to_html();
        assert!(
            empty.contains("colspan=\"3\"") && empty.contains("No &lt;rows&gt;"),
            "{empty}"
        );
    }
}
