//! `RecordList`: a list of records a person edits — one record per table row, or one fieldset
//! per record when records have many or large fields.
//!
//! Every control is named by its path, `line_items[2].quantity` (0-based), so the decoder builds
//! the array of objects from the names alone. The list's record count travels as the hidden
//! [`COUNT_PREFIX`]`<list>` field, so "no records" and "records not sent" differ. Records can
//! start from data: `rows` binds one record to each data row, the `key` field's value travels in
//! a hidden input, and a read-only column is shown as text with its value in a hidden input of
//! its own path, so the answer holds every field the schema requires while the person only
//! corrects what they may.
//!
//! Adding and removing records are navigation, like paging: submit buttons named `_action` with
//! the values `add:<list>` and `remove:<list>[i]` make the page handler re-render the page with
//! every typed value kept and nothing recorded ([`navigation`]). Once hydrated, an island does
//! the same in the browser without a round trip ([`island`]). A list longer than a page
//! (`page_size`, default [`DEFAULT_PAGE_SIZE`]) pages through the form's own submit buttons
//! ([`super::paging`]); records off the page travel as hidden inputs, so every edit is kept.
//!
//! What each column's control is (input type, options, bounds, required, pattern), the list's
//! `min_items`/`max_items` and the labels are derived by code from the response schema when the
//! node is placed, never trusted from a model ([`crate::catalog::FROM_SCHEMA`]).

pub mod island;
pub mod navigation;
mod view;

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::input::{NumberOrText, Step};
use super::paging::DEFAULT_PAGE_SIZE;
use super::{check_choices, check_name, humanize_path, Choice};
use crate::catalog::{ComponentProps, FieldInfo, FieldYield, Role};
use crate::render::NodeCtx;

/// The prefix of the hidden field that carries a list's record count: `_count.line_items`.
pub const COUNT_PREFIX: &str = "_count.";
/// The `_action` value prefix of an add button: `add:line_items`.
pub const ADD_PREFIX: &str = "add:";
/// The `_action` value prefix of a remove button: `remove:line_items[2]`.
pub const REMOVE_PREFIX: &str = "remove:";
/// The most records one list shows and carries, whatever a submission claims; a schema's
/// `maxItems` lowers it.
pub const MAX_RECORDS: usize = 1_000;
/// The most fields a table row holds before records are stacked as fieldsets.
pub const TABLE_MAX_COLUMNS: usize = 6;

/// How one record field is entered.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ColumnInput {
    // One line of free text.
    #[default]
    Text,
    // An email address.
    Email,
    // A web address.
    Url,
    // A calendar date.
    Date,
    // A number (integer unless `step` has a fraction).
    Number,
    // Several lines of text.
    Textarea,
    // One of `options`, from a list.
    Select,
    // One of `options`, as radio buttons side by side (a decision per row).
    Radio,
    // Yes or no.
    Checkbox,
    // Any of `options` (an array of choices).
    Checkboxes,
    // Several free strings (an array of text), one per box.
    List,
}

impl ColumnInput {
    /// Whether a record with this field is better stacked than a table row (long text, several
    /// values).
    #[must_use]
    pub fn needs_stack(self) -> bool {
        matches!(self, Self::Textarea | Self::Checkboxes | Self::List)
    }

    /// The JSON type one control of this kind decodes to.
    #[must_use]
    pub fn yields(self, step: Option<Step>, min: Option<&NumberOrText>) -> FieldYield {
        match self {
            Self::Number => {
                let whole_step = match step {
                    None => true,
                    Some(Step::Value(step)) => step.fract() == 0.0,
                    Some(Step::Any(_)) => false,
                };
                let whole_min = min.is_none_or(|min| {
                    min.text()
                        .parse::<f64>()
                        .is_ok_and(|value| value.fract() == 0.0)
                });
                if whole_step && whole_min {
                    FieldYield::Integer
                } else {
                    FieldYield::Number
                }
            }
            Self::Checkbox => FieldYield::Boolean,
            Self::Checkboxes | Self::List => FieldYield::StringArray,
            Self::Text
            | Self::Email
            | Self::Url
            | Self::Date
            | Self::Textarea
            | Self::Select
            | Self::Radio => FieldYield::String,
        }
    }
}

/// Table rows or stacked fieldsets.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RecordLayout {
    // One table row per record, one cell per field.
    Table,
    // One fieldset per record, one labelled control per field.
    Stack,
}

/// One field of every record. A model gives `field` (the member's path inside the record,
/// `quantity` or `dimensions.width`), and may give `label` and `read_only`; the rest is derived
/// from the schema when the node is placed.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordColumn {
    /// The record member this column edits, such as "quantity".
    pub field: String,
    /// The header (default: the member's schema title).
    #[serde(default)]
    pub label: Option<String>,
    /// Shown as text and sent unchanged (needs bound rows).
    #[serde(default, alias = "readOnly")]
    pub read_only: bool,
    /// How it is entered: derived from the member's schema.
    #[serde(default)]
    pub input: ColumnInput,
    /// The choices of a select or checkboxes: derived from the member's `enum`.
    #[serde(default)]
    pub options: Option<Vec<Choice>>,
    /// Whether each record must have a value: derived from the record's `required`.
    #[serde(default)]
    pub required: bool,
    /// Smallest value: derived from `minimum`.
    #[serde(default)]
    pub min: Option<NumberOrText>,
    /// Largest value: derived from `maximum`.
    #[serde(default)]
    pub max: Option<NumberOrText>,
    /// Number granularity: derived from `multipleOf`/`type`.
    #[serde(default)]
    pub step: Option<Step>,
    /// A regular expression the value must match: derived from `pattern`.
    #[serde(default)]
    pub pattern: Option<String>,
    /// Fewest characters: derived from `minLength`.
    #[serde(default, alias = "minLength")]
    pub min_length: Option<u32>,
    /// Most characters: derived from `maxLength`.
    #[serde(default, alias = "maxLength")]
    pub max_length: Option<u32>,
    /// One sentence of help: derived from the member's `description`.
    #[serde(default)]
    pub help: Option<String>,
    /// What a new blank record starts with: derived from the member's `default`.
    #[serde(default)]
    pub default: Option<Value>,
    /// The legend of the object this member sits in, for a dotted `field` in a stacked record:
    /// derived from that object's title.
    #[serde(default)]
    pub group: Option<String>,
}

impl RecordColumn {
    /// The header shown: the given label, else the member's name made readable (never a path).
    #[must_use]
    pub fn label_text(&self) -> String {
        self.label
            .clone()
            .filter(|label| !label.trim().is_empty())
            .unwrap_or_else(|| humanize_path(&self.field))
    }

    /// The JSON type this column's control decodes to.
    #[must_use]
    pub fn yields(&self) -> FieldYield {
        self.input.yields(self.step, self.min.as_ref())
    }
}

/// Props of the `RecordList` component (names as in the issue 26 contract).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordListProps {
    /// The list's path in the response schema, such as `line_items`.
    pub name: String,
    /// Shown above the records (default: the list's schema title).
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub label: Option<String>,
    /// One sentence under the label (default: the list's schema description).
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub description: Option<String>,
    /// Data rows to correct, bound with $data: one record per row.
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub rows: Option<Vec<Value>>,
    /// The record field that identifies a bound row, such as "sku"; sent unchanged.
    #[serde(default)]
    pub key: Option<String>,
    /// The record fields shown, in order.
    pub columns: Vec<RecordColumn>,
    /// table or stack (default: table for up to 6 short fields): derived from the columns.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub layout: Option<RecordLayout>,
    /// Records per page, 1 to 500 (default 50): set by code.
    #[serde(default, alias = "pageSize")]
    #[schemars(range(min = 1, max = 500), extend("x-from-schema" = true))]
    pub page_size: Option<u32>,
    /// Fewest records: derived from `minItems`.
    #[serde(default, alias = "minItems")]
    #[schemars(extend("x-from-schema" = true))]
    pub min_items: Option<u32>,
    /// Most records: derived from `maxItems`.
    #[serde(default, alias = "maxItems")]
    #[schemars(extend("x-from-schema" = true))]
    pub max_items: Option<u32>,
    /// What one record is called, such as "Line item": derived from the items' title.
    #[serde(default, alias = "itemLabel")]
    #[schemars(extend("x-from-schema" = true))]
    pub item_label: Option<String>,
}

impl RecordListProps {
    /// The layout used: the given one, else a table when there are at most
    /// [`TABLE_MAX_COLUMNS`] fields and none is long text, several values or inside an object.
    #[must_use]
    pub fn layout_used(&self) -> RecordLayout {
        self.layout.unwrap_or_else(|| default_layout(&self.columns))
    }

    /// Whether records are bound to data rows (then the person corrects them and cannot add).
    #[must_use]
    pub fn is_bound(&self, bound_rows: Option<&[Value]>) -> bool {
        bound_rows.is_some() || self.rows.is_some()
    }

    /// The fewest records the list shows.
    #[must_use]
    pub fn min_records(&self) -> usize {
        self.min_items
            .map_or(0, |min| usize::try_from(min).unwrap_or(MAX_RECORDS))
            .min(MAX_RECORDS)
    }

    /// The most records the list shows and carries.
    #[must_use]
    pub fn max_records(&self) -> usize {
        self.max_items
            .map_or(MAX_RECORDS, |max| {
                usize::try_from(max).unwrap_or(MAX_RECORDS)
            })
            .min(MAX_RECORDS)
    }

    /// Records per page.
    #[must_use]
    pub fn records_per_page(&self) -> usize {
        self.page_size.map_or(DEFAULT_PAGE_SIZE, |size| {
            usize::try_from(size).unwrap_or(DEFAULT_PAGE_SIZE).max(1)
        })
    }

    /// The list's label: the given one, else its name made readable.
    #[must_use]
    pub fn label_text(&self) -> String {
        self.label
            .clone()
            .filter(|label| !label.trim().is_empty())
            .unwrap_or_else(|| humanize_path(&self.name))
    }

    /// What one record is called ("Line item"), for "Line item 3" and "Add line item".
    #[must_use]
    pub fn item_text(&self) -> String {
        self.item_label
            .clone()
            .filter(|label| !label.trim().is_empty())
            .unwrap_or_else(|| "Record".to_owned())
    }
}

/// Table for up to [`TABLE_MAX_COLUMNS`] short fields outside objects; otherwise stacked.
#[must_use]
pub fn default_layout(columns: &[RecordColumn]) -> RecordLayout {
    let stacked = columns.len() > TABLE_MAX_COLUMNS
        || columns
            .iter()
            .any(|column| column.input.needs_stack() || column.field.contains('.'));
    if stacked {
        RecordLayout::Stack
    } else {
        RecordLayout::Table
    }
}

/// The form key of one record field: `line_items[2].quantity`.
#[must_use]
pub fn control_name(list: &str, index: usize, field: &str) -> String {
    format!("{list}[{index}].{field}")
}

/// The form key of a list's record count: `_count.line_items`.
#[must_use]
pub fn count_name(list: &str) -> String {
    format!("{COUNT_PREFIX}{list}")
}

impl ComponentProps for RecordListProps {
    const NAME: &'static str = "RecordList";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str = "An array of objects, a row per record; columns: \
        [{field, label?, read_only?}]. Bind rows to data rows to correct; key: their id.";
    const BY_REFERENCE: &'static [&'static str] = &["rows"];

    fn example() -> (Value, Value) {
        (
            json!({
                "name": "line_items", "label": "Line items", "item_label": "Line",
                "rows": {"$data": "/invoice/items"}, "key": "sku",
                "columns": [
                    {"field": "sku", "label": "SKU", "read_only": true, "required": true},
                    {"field": "description", "label": "Description", "read_only": true},
                    {"field": "quantity", "label": "Quantity", "input": "number", "min": 1,
                     "step": 1, "required": true},
                    {"field": "unit_price", "label": "Unit price", "input": "number", "min": 0,
                     "step": 0.01, "required": true}
                ],
                "min_items": 1
            }),
            json!({"invoice": {"items": [
                {"sku": "A-100", "description": "Paper, A4", "quantity": 10, "unit_price": 4.5},
                {"sku": "B-220", "description": "Toner", "quantity": 2, "unit_price": 61.0},
                {"sku": "C-310", "description": "Stapler", "quantity": 1, "unit_price": 12.9}
            ]}}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        if self.columns.is_empty() {
            return Err("`columns` must name at least one record field".to_owned());
        }
        for (index, column) in self.columns.iter().enumerate() {
            if column.field.trim().is_empty() || column.field.starts_with('_') {
                return Err(format!(
                    "column {} needs a `field` naming a record member",
                    index + 1
                ));
            }
            if self.columns[..index]
                .iter()
                .any(|earlier| earlier.field == column.field)
            {
                return Err(format!("the field \"{}\" has two columns", column.field));
            }
            if let Some(options) = &column.options {
                check_choices(options)?;
            }
            if matches!(
                column.input,
                ColumnInput::Select | ColumnInput::Radio | ColumnInput::Checkboxes
            ) && column.options.as_ref().is_none_or(Vec::is_empty)
            {
                return Err(format!(
                    "the field \"{}\" is a choice without `options`",
                    column.field
                ));
            }
        }
        if self
            .page_size
            .is_some_and(|size| !(1..=500).contains(&size))
        {
            return Err("`page_size` must be between 1 and 500".to_owned());
        }
        if let (Some(min), Some(max)) = (self.min_items, self.max_items) {
            if min > max {
                return Err("`min_items` is larger than `max_items`".to_owned());
            }
        }
        if let Some(key) = &self.key {
            if !self.columns.iter().any(|column| column.field == *key) {
                return Err(format!(
                    "`key` \"{key}\" must be one of the columns, so each record sends it"
                ));
            }
        }
        Ok(())
    }

    /// One field, the list itself: what each record holds is in the columns, which
    /// `ValidateForm` and the offered-set check read from the props.
    fn field(&self) -> Option<FieldInfo> {
        Some(FieldInfo::new(
            &self.name,
            self.label_text(),
            FieldYield::Records,
            self.min_items.is_some_and(|min| min > 0),
        ))
    }

    fn render(mut self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let literal_rows = self.rows.take();
        let rows = node.bound("rows").or(literal_rows.as_deref());
        view::render(&self, node, rows)
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use leptos::prelude::*;
    use serde_json::{json, Value};

    use crate::render::{render_tree, RenderCtx};
    use crate::tree::PageTree;

    fn render(props: &Value, ctx: &RenderCtx) -> String {
        let tree: PageTree = serde_json::from_value(json!({
            "nodes": {"f": {"component": "Form", "children": ["r"]},
                      "r": {"component": "RecordList", "props": props.clone()}},
            "order": ["f"]
        }))
        .unwrap_or_default();
        Owner::new().with(|| render_tree(&tree, ctx).to_html())
    }

    fn invoice() -> (Value, Value) {
        super::RecordListProps::example()
    }

    use crate::components::submitted_values as submitted;

    use super::ComponentProps as _;

    #[test]
    fn bound_records_are_named_by_path_with_read_only_values_and_keys_hidden() {
        let (props, data) = invoice();
        let html = render(&props, &RenderCtx::new(data));
        assert!(!html.contains("node-error"), "{html}");
        assert!(
            html.contains(r#"name="line_items[1].quantity" value="2""#),
            "{html}"
        );
        assert!(
            html.contains(r#"name="line_items[2].unit_price" value="12.9""#),
            "{html}"
        );
        // The key and the read-only description travel hidden, shown as text.
        assert!(
            html.contains(r#"<input type="hidden" name="line_items[0].sku" value="A-100">"#),
            "{html}"
        );
        assert!(html.contains(">Toner</span>"), "{html}");
        assert!(
            !html.contains(r#"type="text" name="line_items[0].sku""#),
            "{html}"
        );
        assert!(
            html.contains(r#"name="_count.line_items" value="3""#),
            "{html}"
        );
        // Each record is labelled for assistive technology, never by its path.
        assert!(
            html.contains("Quantity, line <span data-record-number=\"\">2</span>"),
            "{html}"
        );
        assert!(!html.contains(">line_items"), "{html}");
        // Bound records are corrected in place: no add, no remove, no empty actions column.
        assert!(!html.contains("data-record-add"), "{html}");
        assert!(!html.contains("data-record-remove"), "{html}");
        assert!(!html.contains(">Actions<"), "{html}");
    }

    #[test]
    fn a_bound_list_shows_each_of_its_rows_whatever_count_a_crafted_request_sends() {
        let (props, data) = invoice();
        let mut ctx = RenderCtx::new(data);
        ctx.form.values = submitted(&[
            ("_count.line_items", "1"),
            ("line_items[0].sku", "A-100"),
            ("line_items[0].quantity", "11"),
        ]);
        ctx.form
            .errors
            .insert("line_items".to_owned(), "refused".to_owned());
        let html = render(&props, &ctx);
        assert!(
            html.contains(r#"name="_count.line_items" value="3""#),
            "{html}"
        );
        assert!(
            html.contains(r#"name="line_items[0].quantity" value="11""#),
            "{html}"
        );
        assert!(html.contains(r#"name="line_items[2].sku""#), "{html}");
    }

    #[test]
    fn a_refused_submission_shows_the_persons_values_and_the_error_beside_its_control() {
        let (props, data) = invoice();
        let mut ctx = RenderCtx::new(data);
        ctx.form.values = submitted(&[
            ("_count.line_items", "3"),
            ("line_items[0].sku", "A-100"),
            ("line_items[0].quantity", "11"),
            ("line_items[1].sku", "B-220"),
            ("line_items[1].quantity", "0"),
            ("line_items[2].sku", "C-310"),
            ("line_items[2].quantity", "1"),
        ]);
        ctx.form.errors.insert(
            "line_items[1].quantity".to_owned(),
            "Quantity on line 2 must be at least 1".to_owned(),
        );
        let html = render(&props, &ctx);
        assert!(
            html.contains(r#"name="line_items[0].quantity" value="11""#),
            "{html}"
        );
        assert!(
            html.contains(r#"name="line_items[1].quantity" value="0""#),
            "{html}"
        );
        let control = html.find(r#"name="line_items[1].quantity""#).unwrap_or(0);
        let message = html.find("Quantity on line 2 must be").unwrap_or(0);
        let next = html.find(r#"name="line_items[1].unit_price""#).unwrap_or(0);
        assert!(control < message && message < next, "{html}");
        assert!(
            html.contains(r#"aria-describedby="t-r-r1-2-error""#),
            "{html}"
        );
    }

    #[test]
    fn a_list_from_empty_starts_with_its_fewest_records_and_offers_add_up_to_its_most() {
        let props = json!({"name": "contacts", "item_label": "Contact",
            "columns": [{"field": "name", "label": "Name", "required": true},
                        {"field": "email", "label": "Email", "input": "email"}],
            "min_items": 2, "max_items": 3});
        let html = render(&props, &RenderCtx::new(json!({})));
        let records = |html: &str| {
            let before_template = html.split("<template").next().unwrap_or_default();
            before_template.matches(r#"<tr data-record=""#).count()
        };
        assert_eq!(records(&html), 2, "{html}");
        assert!(html.contains(r#"value="add:contacts""#), "{html}");
        assert!(!html.contains("data-record-add=\"\" hidden"), "{html}");
        // At the fewest, no record can be removed.
        let before_template = html.split("<template").next().unwrap_or_default();
        let removes: Vec<&str> = before_template
            .split("<button")
            .filter(|button| button.contains("remove:contacts["))
            .collect();
        assert_eq!(removes.len(), 2, "{html}");
        assert!(
            removes.iter().all(|button| button.contains(" hidden")),
            "{html}"
        );
        let mut ctx = RenderCtx::new(json!({}));
        ctx.form.values = submitted(&[("_count.contacts", "3"), ("contacts[0].name", "a")]);
        let full = render(&props, &ctx);
        assert_eq!(records(&full), 3, "{full}");
        let add = full
            .split("<button")
            .find(|button| button.contains("add:contacts"))
            .unwrap_or_default();
        assert!(add.contains(" hidden"), "{add}");
    }

    #[test]
    fn remove_buttons_show_only_above_the_fewest_records() {
        let props = json!({"name": "contacts",
            "columns": [{"field": "name"}], "min_items": 1});
        let mut ctx = RenderCtx::new(json!({}));
        ctx.form.values = submitted(&[("_count.contacts", "1"), ("contacts[0].name", "a")]);
        let one = render(&props, &ctx);
        let removes: Vec<&str> = one
            .split("<button")
            .filter(|button| button.contains("remove:contacts["))
            .collect();
        assert!(
            removes.iter().all(|button| button.contains(" hidden")),
            "{one}"
        );
        ctx.form.values = submitted(&[("_count.contacts", "2"), ("contacts[0].name", "a")]);
        let two = render(&props, &ctx);
        assert!(
            two.split("<button")
                .filter(|button| button.contains("remove:contacts[1]"))
                .all(|button| !button.contains(" hidden")),
            "{two}"
        );
    }

    #[test]
    fn many_or_large_fields_stack_records_as_fieldsets_with_visible_labels() {
        let props = json!({"name": "hires", "item_label": "New hire",
            "columns": [{"field": "name", "label": "Full name"},
                        {"field": "notes", "label": "Notes", "input": "textarea"},
                        {"field": "address.city", "label": "City", "group": "Home address"}]});
        let html = render(&props, &RenderCtx::new(json!({})));
        assert!(html.contains("<legend"), "{html}");
        assert!(
            html.contains("New hire <span data-record-number=\"\">1</span>"),
            "{html}"
        );
        assert!(html.contains("Home address"), "{html}");
        assert!(html.contains(r#"name="hires[0].address.city""#), "{html}");
        assert!(!html.contains("<table"), "{html}");
    }

    #[test]
    fn a_long_list_shows_one_page_and_carries_the_other_records_hidden() {
        let rows: Vec<Value> = (0..120)
            .map(|n| json!({"sku": format!("S{n}"), "quantity": n}))
            .collect();
        let props = json!({"name": "items", "rows": {"$data": "/rows"}, "key": "sku",
            "columns": [{"field": "sku", "read_only": true}, {"field": "quantity", "input": "number"}],
            "page_size": 50});
        let mut ctx = RenderCtx::new(json!({ "rows": rows }));
        ctx.query.insert("r.page".to_owned(), "2".to_owned());
        let html = render(&props, &ctx);
        assert_eq!(
            html.matches(r#"type="number" name="items["#).count(),
            50,
            "{html}"
        );
        assert!(
            html.contains(r#"type="number" name="items[50].quantity""#),
            "{html}"
        );
        assert!(
            html.contains(r#"<input type="hidden" name="items[0].quantity" value="0">"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<input type="hidden" name="items[119].quantity" value="119">"#),
            "{html}"
        );
        assert!(html.contains("table-pager"), "{html}");
    }
}
