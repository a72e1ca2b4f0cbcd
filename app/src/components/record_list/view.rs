//! The markup of a `RecordList`: the records of the current page as table rows or fieldsets,
//! the records of other pages as hidden inputs, the add and remove buttons, and the blank
//! record the island copies.
//!
//! A record's values come, in this order, from the person's submission when it holds any key of
//! the record (a 422, a page change, an added or removed record), from its bound data row, or
//! from the columns' defaults (a new blank record).

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::Value;

use super::island::RecordEditor;
use super::navigation::ADDED_FIELD;
use super::{
    control_name, count_name, ColumnInput, RecordColumn, RecordLayout, RecordListProps, ADD_PREFIX,
    REMOVE_PREFIX,
};
use crate::components::input::{escape_textarea, NumberOrText, Step};
use crate::components::paging::{CarriedValues, Pager, Window};
use crate::components::{
    control_class, display_text, Described, FieldNotes, RequiredMark, LABEL_CLASS, TICK_CLASS,
};
use crate::render::budget::{BudgetLimit, Meter};
use crate::render::{NodeCtx, ACTION_FIELD};

/// The index text of the blank record the island copies; replaced when it is added.
pub(super) const TEMPLATE_INDEX: &str = "__INDEX__";
/// About what one control takes besides its values (attributes, label, cell).
const CONTROL_BYTES: usize = 400;

const SMALL_BUTTON: &str = "rounded-md border border-slate-400 bg-white px-3 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:bg-slate-800 dark:text-slate-100 dark:hover:bg-slate-700";
const READ_ONLY_CLASS: &str =
    "block rounded-md bg-slate-100 px-3 py-2 text-slate-700 dark:bg-slate-900 dark:text-slate-300";

/// Where one record sits: its 0-based index as written in names and its 1-based number as
/// shown, or the placeholders of the island's blank record.
#[derive(Clone, Debug)]
struct Slot {
    index: String,
    number: String,
}

impl Slot {
    fn at(index: usize) -> Self {
        Self {
            index: index.to_string(),
            number: (index + 1).to_string(),
        }
    }

    fn template() -> Self {
        Self {
            index: TEMPLATE_INDEX.to_owned(),
            number: String::new(),
        }
    }
}

/// What the list's records hold and where it comes from.
struct Records<'a> {
    list: &'a str,
    values: &'a BTreeMap<String, Vec<String>>,
    errors: &'a BTreeMap<String, String>,
    submitted: bool,
    rows: Option<&'a [Value]>,
}

impl Records<'_> {
    /// Whether the submission holds any key of record `index`.
    fn sent(&self, index: usize) -> bool {
        let prefix = format!("{}[{index}].", self.list);
        self.values
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(key, _)| key.starts_with(&prefix))
    }

    /// The values record `index` shows for `column`.
    fn values(&self, index: usize, column: &RecordColumn) -> Vec<String> {
        if self.submitted && self.sent(index) {
            return self
                .values
                .get(&control_name(self.list, index, &column.field))
                .cloned()
                .unwrap_or_default();
        }
        match self.rows.and_then(|rows| rows.get(index)) {
            Some(row) => member(row, &column.field).map_or_else(Vec::new, texts),
            None => column.default.as_ref().map_or_else(Vec::new, texts),
        }
    }

    /// How many records the list holds: a bound list its rows, always (it is corrected in place,
    /// whatever a crafted `_count` or remove says); else as sent, else the fewest allowed (at
    /// least one), kept within the list's bounds.
    fn count(&self, props: &RecordListProps) -> usize {
        if let Some(rows) = self.rows {
            return rows.len();
        }
        let sent = self
            .submitted
            .then(|| {
                self.values
                    .get(&count_name(self.list))
                    .and_then(|values| values.last())
                    .and_then(|count| count.trim().parse::<usize>().ok())
            })
            .flatten();
        let count = sent.unwrap_or_else(|| {
            self.rows
                .map_or_else(|| props.min_records().max(1), <[Value]>::len)
        });
        count.clamp(props.min_records(), props.max_records())
    }
}

/// The value at a dotted member path of a record.
fn member<'v>(row: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.')
        .try_fold(row, |value, key| value.as_object()?.get(key))
}

/// A data value as the form texts a browser would send for it.
fn texts(value: &Value) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().map(display_text).collect(),
        other => vec![display_text(other)],
    }
}

fn is_checked(values: &[String]) -> bool {
    values.last().is_some_and(|value| {
        matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "on" | "true" | "1" | "yes"
        )
    })
}

/// Renders the list (see the module docs).
#[expect(clippy::too_many_lines, reason = "one pass over the list's parts")]
pub(super) fn render(
    props: &RecordListProps,
    node: &NodeCtx<'_>,
    rows: Option<&[Value]>,
) -> AnyView {
    let form = &node.ctx.form;
    let records = Records {
        list: &props.name,
        values: &form.values,
        errors: &form.errors,
        submitted: !form.is_pristine(),
        rows,
    };
    let dom_id = node.dom_id();
    let layout = props.layout_used();
    let count = records.count(props);
    let bound = props.is_bound(rows);
    let can_add = !bound;
    let min = props.min_records();
    let max = props.max_records();
    let item = props.item_text();
    let label = props.label_text();

    let (page, page_count, first, end) = shown_page(props, node, count);

    let list_error = form.errors.get(&props.name).cloned();
    let described = Described::new(&dom_id, props.description.as_ref(), list_error.as_ref());
    let meter = node.meter;
    let view_of = |index: usize| {
        let slot = Slot::at(index);
        let values: Vec<Vec<String>> = props
            .columns
            .iter()
            .map(|column| records.values(index, column))
            .collect();
        let cost = values
            .iter()
            .flatten()
            .map(|value| 2 * value.len() + CONTROL_BYTES)
            .sum::<usize>();
        if !(meter.charge(BudgetLimit::Rows, 1) && meter.charge(BudgetLimit::Bytes, cost)) {
            return None;
        }
        let errors: Vec<Option<String>> = props
            .columns
            .iter()
            .map(|column| {
                records
                    .errors
                    .get(&control_name(&props.name, index, &column.field))
                    .cloned()
            })
            .collect();
        let record_error = records
            .errors
            .get(&format!("{}[{index}]", props.name))
            .cloned();
        Some(record_view(
            props,
            &dom_id,
            layout,
            &slot,
            &values,
            &errors,
            record_error,
            // A bound list is corrected in place: its rows are what the answer is about.
            (!bound).then_some(count > min),
        ))
    };
    let before = carried_records(props, &records, meter, 0..first);
    let shown: Vec<AnyView> = (first..end).map_while(view_of).collect();
    let after = carried_records(props, &records, meter, end..count);

    let template = can_add.then(|| {
        let slot = Slot::template();
        let values: Vec<Vec<String>> = props
            .columns
            .iter()
            .map(|column| column.default.as_ref().map_or_else(Vec::new, texts))
            .collect();
        let errors = vec![None; props.columns.len()];
        let record = record_view(
            props,
            &dom_id,
            layout,
            &slot,
            &values,
            &errors,
            None,
            Some(true),
        );
        view! { <template data-record-template="">{record}</template> }
    });
    let add = can_add.then(|| {
        let value = format!("{ADD_PREFIX}{}", props.name);
        let at_most = count >= max;
        view! {
            <button type="submit" name=ACTION_FIELD value=value formnovalidate=true hidden=at_most
                class=SMALL_BUTTON data-testid="record-add" data-record-add="">
                {format!("Add {}", item.to_lowercase())}
            </button>
        }
    });
    let pager = (page_count > 1).then(|| {
        let window = Window {
            visible: (first..end).collect(),
            page,
            page_count,
            matching: count,
            total: count,
            search: String::new(),
            sort: None,
        };
        view! { <Pager node_id=node.id.to_owned() dom_id=dom_id.clone() label=label.clone() window/> }
    });
    let records_view = match layout {
        RecordLayout::Table => records_table(props, (&label, &item), bound, shown),
        RecordLayout::Stack => {
            view! { <div class="space-y-4" data-record-body="">{shown}</div> }.into_any()
        }
    };
    let status_id = format!("{dom_id}-status");
    let required = min > 0;
    let described_by = described.by();
    view! {
        <fieldset id=dom_id.clone() class="space-y-3" aria-describedby=described_by
            data-testid="record-list" data-record-list="" data-list=props.name.clone()>
            <legend class="text-base font-semibold text-slate-900 dark:text-slate-100">
                {label.clone()}
                <RequiredMark required/>
            </legend>
            <FieldNotes described help=props.description.clone() error=list_error/>
            // Enter in a box presses the form's first submit button: this one, which submits
            // the answer, so Enter never removes a record.
            <button type="submit" name=ACTION_FIELD value="submit" hidden=true tabindex="-1"></button>
            <input type="hidden" name=count_name(&props.name) value=count.to_string() data-record-count=""/>
            {before}
            {records_view}
            {after}
            <div class="flex flex-wrap items-center gap-3">
                {add}
                <p id=status_id class="sr-only" role="status" data-record-status=""></p>
            </div>
            {pager}
            {template}
            <RecordEditor list=props.name.clone() dom_id=dom_id.clone() item=item.clone() min max/>
        </fieldset>
    }
    .into_any()
}

/// The page of records shown: `(page, page_count, first, end)`, the shown records being
/// `first..end`. A list a record was just added to shows its last page, where the new one is;
/// otherwise the page the query names (`{node}.page`).
fn shown_page(
    props: &RecordListProps,
    node: &NodeCtx<'_>,
    count: usize,
) -> (usize, usize, usize, usize) {
    let form = &node.ctx.form;
    let page_size = props.records_per_page();
    let page_count = count.div_ceil(page_size).max(1);
    let added_here = form
        .values
        .get(ADDED_FIELD)
        .is_some_and(|lists| lists.contains(&props.name));
    let page = if added_here {
        page_count
    } else {
        node.ctx
            .query
            .get(&format!("{}.page", node.id))
            .and_then(|page| page.trim().parse::<usize>().ok())
            .unwrap_or(1)
    }
    .clamp(1, page_count);
    let first = (page - 1) * page_size;
    let end = (first + page_size).min(count);
    (page, page_count, first, end)
}

/// The records in `range` that are on other pages: their values as hidden inputs, so the answer
/// keeps them, within what the budget still allows.
fn carried_records(
    props: &RecordListProps,
    records: &Records<'_>,
    meter: &Meter,
    range: std::ops::Range<usize>,
) -> AnyView {
    let mut groups = Vec::new();
    for index in range {
        let mut pairs = Vec::new();
        for column in &props.columns {
            let name = control_name(&props.name, index, &column.field);
            for value in records.values(index, column) {
                pairs.push((name.clone(), value));
            }
        }
        let cost = pairs
            .iter()
            .map(|(name, value)| name.len() + 2 * value.len() + 40)
            .sum::<usize>();
        if !meter.charge(BudgetLimit::Bytes, cost) {
            break;
        }
        groups.push(view! {
            <div data-record=index.to_string() hidden><CarriedValues pairs/></div>
        });
    }
    groups.collect_view().into_any()
}

/// The table layout: a header row of the columns (and the actions, for a list that is not
/// bound), `shown` as its rows.
fn records_table(
    props: &RecordListProps,
    (label, item): (&str, &str),
    bound: bool,
    shown: Vec<AnyView>,
) -> AnyView {
    let headers = props
        .columns
        .iter()
        .map(|column| {
            let required = column.required && !column.read_only;
            view! {
                <th scope="col" class="px-3 py-2 text-left text-sm font-semibold text-slate-900 dark:text-slate-100">
                    {column.label_text()}
                    <RequiredMark required/>
                </th>
            }
        })
        .collect_view();
    view! {
        <div class="overflow-x-auto rounded-lg border border-slate-200 bg-white dark:border-slate-700 dark:bg-slate-800"
            tabindex="0" role="region" aria-label=label.to_owned()>
            <table class="min-w-full">
                <thead class="bg-slate-50 dark:bg-slate-900">
                    <tr>
                        <th scope="col" class="w-px px-3 py-2 text-left text-sm font-semibold text-slate-900 dark:text-slate-100">
                            <span class="sr-only">{item.to_owned()}</span>"#"
                        </th>
                        {headers}
                        {(!bound).then(|| view! {
                            <th scope="col" class="w-px px-3 py-2"><span class="sr-only">"Actions"</span></th>
                        })}
                    </tr>
                </thead>
                <tbody data-record-body="">{shown}</tbody>
            </table>
        </div>
    }
    .into_any()
}

/// One record: a table row or a fieldset.
#[expect(clippy::too_many_arguments, reason = "the parts of one record")]
fn record_view(
    props: &RecordListProps,
    dom_id: &str,
    layout: RecordLayout,
    slot: &Slot,
    values: &[Vec<String>],
    errors: &[Option<String>],
    record_error: Option<String>,
    removable: Option<bool>,
) -> AnyView {
    let item = props.item_text();
    let number = || view! { <span data-record-number="">{slot.number.clone()}</span> };
    let remove = removable.map(|removable| view! {
        <button type="submit" name=ACTION_FIELD value=format!("{REMOVE_PREFIX}{}[{}]", props.name, slot.index)
            formnovalidate=true hidden=!removable class=SMALL_BUTTON data-testid="record-remove" data-record-remove="">
            "Remove"<span class="sr-only">{format!(" {} ", item.to_lowercase())}{number()}</span>
        </button>
    });
    let record_error = record_error.map(|error| {
        view! { <p class="text-sm font-medium text-red-700 dark:text-red-300" data-testid="field-error">{error}</p> }
    });
    // One column's control, with its label shown (stacked) or left to the table's header.
    let column_field = |position: usize, column: &RecordColumn, visible_label: bool| {
        field_view(
            props,
            dom_id,
            slot,
            position,
            column,
            &values[position],
            errors[position].clone(),
            visible_label,
        )
    };
    match layout {
        RecordLayout::Table => {
            let cells = props
                .columns
                .iter()
                .enumerate()
                .map(|(position, column)| {
                    let cell = column_field(position, column, false);
                    let class = if column.read_only {
                        "bg-slate-50 px-3 py-2 align-top text-sm dark:bg-slate-900"
                    } else {
                        "px-3 py-2 align-top text-sm"
                    };
                    view! { <td class=class>{cell}</td> }
                })
                .collect_view();
            view! {
                <tr class="border-t border-slate-200 dark:border-slate-700" data-record=slot.index.clone()>
                    <th scope="row" class="px-3 py-2 text-left align-top text-sm font-medium text-slate-700 dark:text-slate-300">
                        <span class="sr-only">{format!("{item} ")}</span>{number()}
                        {record_error}
                    </th>
                    {cells}
                    {remove.map(|remove| view! { <td class="px-3 py-2 align-top">{remove}</td> })}
                </tr>
            }
            .into_any()
        }
        RecordLayout::Stack => {
            let mut groups: Vec<AnyView> = Vec::new();
            let mut current_group: Option<(String, String, Vec<AnyView>)> = None;
            for (position, column) in props.columns.iter().enumerate() {
                let field = column_field(position, column, true);
                let prefix = column
                    .field
                    .rsplit_once('.')
                    .map(|(prefix, _)| prefix.to_owned());
                match prefix {
                    None => {
                        if let Some(group) = current_group.take() {
                            groups.push(member_group(group));
                        }
                        groups.push(field);
                    }
                    Some(prefix) => {
                        let same = current_group
                            .as_ref()
                            .is_some_and(|(open, _, _)| *open == prefix);
                        if !same {
                            if let Some(group) = current_group.take() {
                                groups.push(member_group(group));
                            }
                            let legend = column
                                .group
                                .clone()
                                .unwrap_or_else(|| crate::components::humanize_path(&prefix));
                            current_group = Some((prefix, legend, Vec::new()));
                        }
                        if let Some((_, _, fields)) = current_group.as_mut() {
                            fields.push(field);
                        }
                    }
                }
            }
            if let Some(group) = current_group.take() {
                groups.push(member_group(group));
            }
            view! {
                <fieldset class="space-y-3 rounded-lg border border-slate-300 p-4 dark:border-slate-600" data-record=slot.index.clone()>
                    <legend class="px-1 text-sm font-semibold text-slate-900 dark:text-slate-100">{format!("{item} ")}{number()}</legend>
                    {record_error}
                    <div class="grid gap-4 sm:grid-cols-2">{groups}</div>
                    {remove.map(|remove| view! { <div>{remove}</div> })}
                </fieldset>
            }
            .into_any()
        }
    }
}

/// The members of an object inside a stacked record, under the object's legend.
fn member_group((_, legend, fields): (String, String, Vec<AnyView>)) -> AnyView {
    view! {
        <fieldset class="space-y-3 rounded-md border border-slate-200 p-3 sm:col-span-2 dark:border-slate-700">
            <legend class="px-1 text-sm font-medium text-slate-800 dark:text-slate-200">{legend}</legend>
            <div class="grid gap-4 sm:grid-cols-2">{fields}</div>
        </fieldset>
    }
    .into_any()
}

/// One field of one record: a control (with its label, visible in a stack, for screen readers
/// in a table) and its error, or a read-only value with its hidden inputs.
#[expect(clippy::too_many_arguments, reason = "the parts of one control")]
fn field_view(
    props: &RecordListProps,
    dom_id: &str,
    slot: &Slot,
    position: usize,
    column: &RecordColumn,
    values: &[String],
    error: Option<String>,
    visible_label: bool,
) -> AnyView {
    let name = format!("{}[{}].{}", props.name, slot.index, column.field);
    let id = format!("{dom_id}-r{}-{position}", slot.index);
    let item = props.item_text().to_lowercase();
    let label_text = column.label_text();
    let number = view! { <span data-record-number="">{slot.number.clone()}</span> };
    let label = if visible_label {
        view! {
            <label for=id.clone() class=LABEL_CLASS>
                {label_text.clone()}
                <RequiredMark required=column.required && !column.read_only/>
                <span class="sr-only">{format!(", {item} ")}{number}</span>
            </label>
        }
        .into_any()
    } else {
        view! { <label for=id.clone() class="sr-only">{format!("{label_text}, {item} ")}{number}</label> }
            .into_any()
    };
    if column.read_only {
        let shown = read_only_text(column, values);
        let hidden: Vec<(String, String)> = if column.input == ColumnInput::Checkbox {
            is_checked(values)
                .then(|| (name.clone(), "true".to_owned()))
                .into_iter()
                .collect()
        } else {
            values
                .iter()
                .map(|value| (name.clone(), value.clone()))
                .collect()
        };
        let error_view = error.map(|error| {
            view! { <p class="text-sm font-medium text-red-700 dark:text-red-300" data-testid="field-error">{error}</p> }
        });
        let heading = visible_label.then(|| {
            view! { <span class=LABEL_CLASS>{label_text.clone()}</span> }
        });
        return view! {
            <div class="space-y-1" data-testid="read-only">
                {heading}
                <span class=READ_ONLY_CLASS>{shown}</span>
                <CarriedValues pairs=hidden/>
                {error_view}
            </div>
        }
        .into_any();
    }
    let help = if visible_label {
        column.help.clone()
    } else {
        None
    };
    let described = Described::new(&id, help.as_ref(), error.as_ref());
    let invalid = error.is_some();
    let control = control_view(column, &name, &id, values, &described, invalid, &label_text);
    let group_described_by = described.by();
    if matches!(
        column.input,
        ColumnInput::Checkboxes | ColumnInput::List | ColumnInput::Radio
    ) {
        // Several controls: a group with its own legend instead of one label.
        return view! {
            <fieldset class="space-y-1" aria-describedby=group_described_by>
                <legend class=if visible_label { LABEL_CLASS } else { "sr-only" }>
                    {label_text}
                    <RequiredMark required=column.required/>
                    <span class="sr-only">{format!(", {item} ")}<span data-record-number="">{slot.number.clone()}</span></span>
                </legend>
                {control}
                <FieldNotes described help error/>
            </fieldset>
        }
        .into_any();
    }
    let checkbox = column.input == ColumnInput::Checkbox;
    view! {
        <div class=if checkbox { "flex flex-row-reverse items-center justify-end gap-2" } else { "space-y-1" }>
            {label}
            {control}
        </div>
        <FieldNotes described help error/>
    }
    .into_any()
}

/// What a read-only field shows: option labels for choices, Yes/No for a checkbox.
fn read_only_text(column: &RecordColumn, values: &[String]) -> String {
    if column.input == ColumnInput::Checkbox {
        return if is_checked(values) { "Yes" } else { "No" }.to_owned();
    }
    let label_of = |value: &String| {
        column
            .options
            .as_ref()
            .and_then(|options| options.iter().find(|option| option.value() == value))
            .map_or_else(|| value.clone(), |option| option.label().to_owned())
    };
    let text = values.iter().map(label_of).collect::<Vec<_>>().join(", ");
    if text.is_empty() {
        "\u{2014}".to_owned()
    } else {
        text
    }
}

/// The control of one editable field.
fn control_view(
    column: &RecordColumn,
    name: &str,
    id: &str,
    values: &[String],
    described: &Described,
    invalid: bool,
    label_text: &str,
) -> AnyView {
    let described_by = described.by();
    let aria_invalid = invalid.then_some("true");
    let last = values.last().cloned().unwrap_or_default();
    let class = control_class(invalid);
    match column.input {
        ColumnInput::Textarea => {
            let text = format!("\n{}", escape_textarea(&last));
            view! {
                <textarea id=id.to_owned() name=name.to_owned() rows="3" required=column.required
                    minlength=column.min_length.map(|length| length.to_string())
                    maxlength=column.max_length.map(|length| length.to_string())
                    aria-invalid=aria_invalid aria-describedby=described_by class=class>{text}</textarea>
            }
            .into_any()
        }
        ColumnInput::Select => {
            let options = column.options.clone().unwrap_or_default();
            let blank = (!column.required || last.is_empty()).then(|| {
                let text = if column.required { "Choose\u{2026}" } else { "\u{2014}" };
                view! { <option value="" selected=last.is_empty()>{text}</option> }
            });
            let choices = options
                .iter()
                .map(|option| {
                    let selected = option.value() == last;
                    view! { <option value=option.value().to_owned() selected=selected>{option.label().to_owned()}</option> }
                })
                .collect_view();
            view! {
                <select id=id.to_owned() name=name.to_owned() required=column.required
                    aria-invalid=aria_invalid aria-describedby=described_by class=class>
                    {blank}{choices}
                </select>
            }
            .into_any()
        }
        ColumnInput::Checkbox => view! {
            <input id=id.to_owned() type="checkbox" name=name.to_owned() value="true" checked=is_checked(values)
                aria-invalid=aria_invalid aria-describedby=described_by class=TICK_CLASS/>
        }
        .into_any(),
        ColumnInput::Radio => {
            let options = column.options.clone().unwrap_or_default();
            let none = (!column.required).then(|| {
                let box_id = format!("{id}-none");
                view! {
                    <div class="flex items-center gap-1">
                        <input id=box_id.clone() type="radio" name=name.to_owned() value="" checked=last.is_empty()
                            aria-invalid=aria_invalid class=TICK_CLASS/>
                        <label for=box_id class="text-sm text-slate-800 dark:text-slate-200">"No decision"</label>
                    </div>
                }
            });
            let radios = options
                .iter()
                .enumerate()
                .map(|(position, option)| {
                    let box_id = format!("{id}-{position}");
                    view! {
                        <div class="flex items-center gap-1">
                            <input id=box_id.clone() type="radio" name=name.to_owned() value=option.value().to_owned()
                                checked=option.value() == last required=column.required
                                aria-invalid=aria_invalid class=TICK_CLASS/>
                            <label for=box_id class="text-sm text-slate-800 dark:text-slate-200">{option.label().to_owned()}</label>
                        </div>
                    }
                })
                .collect_view();
            view! { <div class="flex flex-wrap gap-x-4 gap-y-1">{radios}{none}</div> }.into_any()
        }
        ColumnInput::Checkboxes => {
            let options = column.options.clone().unwrap_or_default();
            options
                .iter()
                .enumerate()
                .map(|(position, option)| {
                    let box_id = format!("{id}-{position}");
                    let checked = values.iter().any(|value| value == option.value());
                    view! {
                        <div class="flex items-center gap-2">
                            <input id=box_id.clone() type="checkbox" name=name.to_owned() value=option.value().to_owned()
                                checked=checked aria-invalid=aria_invalid class=TICK_CLASS/>
                            <label for=box_id class="text-sm text-slate-800 dark:text-slate-200">{option.label().to_owned()}</label>
                        </div>
                    }
                })
                .collect_view()
                .into_any()
        }
        ColumnInput::List => {
            let mut entries: Vec<String> = values
                .iter()
                .filter(|value| !value.trim().is_empty())
                .cloned()
                .collect();
            let wanted = (entries.len() + 1).clamp(2, 10);
            entries.resize(wanted, String::new());
            entries
                .into_iter()
                .enumerate()
                .map(|(position, value)| {
                    let box_id = format!("{id}-{position}");
                    let aria_label = format!("{label_text}, entry {}", position + 1);
                    view! {
                        <input id=box_id type="text" name=name.to_owned() value=value aria-label=aria_label
                            required=column.required && position == 0
                            aria-invalid=aria_invalid class=class/>
                    }
                })
                .collect_view()
                .into_any()
        }
        ColumnInput::Text
        | ColumnInput::Email
        | ColumnInput::Url
        | ColumnInput::Date
        | ColumnInput::Number => {
            let input_type = match column.input {
                ColumnInput::Email => "email",
                ColumnInput::Url => "url",
                ColumnInput::Date => "date",
                ColumnInput::Number => "number",
                _ => "text",
            };
            view! {
                <input id=id.to_owned() type=input_type name=name.to_owned() value=last
                    required=column.required
                    min=column.min.as_ref().map(NumberOrText::text)
                    max=column.max.as_ref().map(NumberOrText::text)
                    step=column.step.map(Step::text)
                    pattern=column.pattern.clone()
                    minlength=column.min_length.map(|length| length.to_string())
                    maxlength=column.max_length.map(|length| length.to_string())
                    aria-invalid=aria_invalid aria-describedby=described_by class=class/>
            }
            .into_any()
        }
    }
}
