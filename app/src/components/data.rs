//! List, `KeyValue`, Stat, `ProgressBar` and Timeline: components that show data.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::display_text;
use crate::catalog::{ComponentProps, Role};
use crate::render::NodeCtx;

const EMPTY_CLASS: &str = "text-sm italic text-slate-600 dark:text-slate-300";

/// Props of the `List` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListProps {
    /// The entries, usually bound with {"$data": "/pointer"}; strings and numbers are shown as
    /// they are, objects through `itemKey`.
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub items: Option<Vec<Value>>,
    /// Number the entries (for steps or rankings) instead of bullets.
    #[serde(default)]
    pub ordered: bool,
    /// For object entries: the key whose value is shown.
    #[serde(default)]
    pub item_key: Option<String>,
    /// What to show when there are no entries (default "Nothing to show.").
    #[serde(default)]
    pub empty_text: Option<String>,
}

impl ComponentProps for ListProps {
    const NAME: &'static str = "List";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str =
        "Bulleted or numbered entries; itemKey picks what to show of objects.";

    fn example() -> (Value, Value) {
        (
            json!({"items": {"$data": "/senders"}, "itemKey": "name"}),
            json!({"senders": [{"name": "Newsletter Weekly"}, {"name": "Billing"}, {"name": "Old Project"}]}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <ListView props=self/> }.into_any()
    }
}

/// A `<ul>` or `<ol>`, or the empty text.
#[component]
pub fn ListView(props: ListProps) -> impl IntoView {
    let items = props.items.unwrap_or_default();
    if items.is_empty() {
        let text = props
            .empty_text
            .unwrap_or_else(|| "Nothing to show.".to_owned());
        return view! { <p class=EMPTY_CLASS>{text}</p> }.into_any();
    }
    let entries = items
        .iter()
        .map(|item| {
            let shown = match (&props.item_key, item) {
                (Some(key), Value::Object(object)) => {
                    object.get(key).map(display_text).unwrap_or_default()
                }
                _ => display_text(item),
            };
            view! { <li>{shown}</li> }
        })
        .collect_view();
    if props.ordered {
        view! { <ol class="list-decimal space-y-1 pl-6 text-slate-800 dark:text-slate-200">{entries}</ol> }.into_any()
    } else {
        view! { <ul class="list-disc space-y-1 pl-6 text-slate-800 dark:text-slate-200">{entries}</ul> }.into_any()
    }
}

/// One labelled fact.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KeyValueItem {
    /// The label, such as "Sender".
    pub label: String,
    /// The value; strings, numbers and booleans are shown as text.
    pub value: Value,
}

/// Labelled facts: a list of {label, value} in order, or an object whose keys are the labels.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum KeyValueItems {
    /// {label, value} pairs in display order.
    List(Vec<KeyValueItem>),
    /// An object: keys are labels (shown in key order).
    Object(Map<String, Value>),
}

/// Props of the `KeyValue` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KeyValueProps {
    /// The facts: [{"label", "value"}] in order, or an object bound with {"$data": "/record"}.
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub items: Option<KeyValueItems>,
}

impl ComponentProps for KeyValueProps {
    const NAME: &'static str = "KeyValue";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "Labelled facts about one record.";

    fn example() -> (Value, Value) {
        (
            json!({"items": [
                {"label": "Mailbox", "value": {"$data": "/mailbox"}},
                {"label": "Emails found", "value": {"$data": "/count"}},
                {"label": "Oldest", "value": "{{/oldest}}"}
            ]}),
            json!({"mailbox": "ada@example.com", "count": 3, "oldest": "2023-01-04"}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <KeyValueView props=self/> }.into_any()
    }
}

/// A `<dl>` of label/value pairs.
#[component]
pub fn KeyValueView(props: KeyValueProps) -> impl IntoView {
    let pairs: Vec<(String, String)> = match props.items {
        Some(KeyValueItems::List(items)) => items
            .into_iter()
            .map(|item| (item.label, display_text(&item.value)))
            .collect(),
        Some(KeyValueItems::Object(object)) => object
            .into_iter()
            .map(|(key, value)| (key, display_text(&value)))
            .collect(),
        None => Vec::new(),
    };
    if pairs.is_empty() {
        return view! { <p class=EMPTY_CLASS>"No details."</p> }.into_any();
    }
    let rows = pairs
        .into_iter()
        .map(|(label, value)| {
            view! {
                <div class="grid grid-cols-3 gap-4 py-2">
                    <dt class="text-sm font-medium text-slate-600 dark:text-slate-300">{label}</dt>
                    <dd class="col-span-2 text-slate-900 break-words dark:text-slate-100">{value}</dd>
                </div>
            }
        })
        .collect_view();
    view! { <dl class="divide-y divide-slate-200 dark:divide-slate-700">{rows}</dl> }.into_any()
}

/// Props of the `Stat` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StatProps {
    /// What the number measures, such as "Unread emails".
    pub label: String,
    /// The number (or short text), usually bound with {"$data": "/pointer"}.
    #[schemars(extend("x-bindable" = true))]
    pub value: Value,
    /// The change since last time, such as "+12%" or "-3"; a leading + shows green, - red.
    #[serde(default)]
    pub delta: Option<String>,
}

impl ComponentProps for StatProps {
    const NAME: &'static str = "Stat";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "A headline number, with a delta such as \"+12%\".";

    fn example() -> (Value, Value) {
        (
            json!({"label": "Emails to archive", "value": {"$data": "/count"}, "delta": "+2 since Monday"}),
            json!({"count": 1204}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <StatView props=self/> }.into_any()
    }
}

/// Formats whole numbers with thousands separators; other values as text.
fn stat_text(value: &Value) -> String {
    if let Some(number) = value.as_i64() {
        let digits = number.unsigned_abs().to_string();
        let mut grouped = String::new();
        for (index, digit) in digits.chars().enumerate() {
            if index > 0 && (digits.len() - index) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(digit);
        }
        if number < 0 {
            grouped.insert(0, '-');
        }
        return grouped;
    }
    match value {
        Value::Null => "\u{2014}".to_owned(),
        other => display_text(other),
    }
}

/// A label, a big number and a coloured change.
#[component]
pub fn StatView(props: StatProps) -> impl IntoView {
    let value = stat_text(&props.value);
    let delta = props.delta.map(|delta| {
        let trimmed = delta.trim_start();
        let (class, arrow) = if trimmed.starts_with('+') {
            (
                "text-sm font-medium text-green-700 dark:text-green-300",
                "\u{25b2} ",
            )
        } else if trimmed.starts_with('-') || trimmed.starts_with('\u{2212}') {
            (
                "text-sm font-medium text-red-700 dark:text-red-300",
                "\u{25bc} ",
            )
        } else {
            ("text-sm font-medium text-slate-600 dark:text-slate-300", "")
        };
        view! {
            <p class=class>
                <span aria-hidden="true">{arrow}</span>
                {delta}
            </p>
        }
    });
    view! {
        <div class="min-w-40 rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:border-slate-700 dark:bg-slate-800">
            <p class="text-sm text-slate-600 dark:text-slate-300">{props.label}</p>
            <p class="mt-1 text-3xl font-semibold tabular-nums text-slate-900 dark:text-slate-100">{value}</p>
            {delta}
        </div>
    }
}

/// Props of the `ProgressBar` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProgressBarProps {
    /// What is progressing, such as "Emails archived".
    pub label: String,
    /// How far along, from 0 to `max`; omit (or bind to nothing) for "in progress, amount unknown".
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub value: Option<f64>,
    /// The value that means done (default 100).
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub max: Option<f64>,
}

impl ComponentProps for ProgressBarProps {
    const NAME: &'static str = "ProgressBar";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "Progress of value towards max (default 100).";

    fn example() -> (Value, Value) {
        (
            json!({"label": "Emails archived", "value": {"$data": "/done"}, "max": {"$data": "/total"}}),
            json!({"done": 40, "total": 120}),
        )
    }

    fn check(&self) -> Result<(), String> {
        if self.max.is_some_and(|max| !(max.is_finite() && max > 0.0)) {
            return Err("`max` must be a positive number".to_owned());
        }
        if self.value.is_some_and(|value| !value.is_finite()) {
            return Err("`value` must be a finite number".to_owned());
        }
        Ok(())
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <ProgressBarView dom_id=node.dom_id() props=self/> }.into_any()
    }
}

/// A native `<progress>` with its label and the percentage as text.
#[component]
pub fn ProgressBarView(dom_id: String, props: ProgressBarProps) -> impl IntoView {
    let max = props
        .max
        .filter(|max| max.is_finite() && *max > 0.0)
        .unwrap_or(100.0);
    let value = props
        .value
        .filter(|value| value.is_finite())
        .map(|value| value.clamp(0.0, max));
    let shown = value.map_or_else(
        || "In progress".to_owned(),
        |value| format!("{}%", (value / max * 100.0).round()),
    );
    view! {
        <div class="space-y-1">
            <div class="flex justify-between text-sm">
                <label for=dom_id.clone() class="font-medium text-slate-800 dark:text-slate-200">{props.label}</label>
                <span class="tabular-nums text-slate-700 dark:text-slate-300">{shown}</span>
            </div>
            <progress
                id=dom_id
                max=max.to_string()
                value=value.map(|value| value.to_string())
                class="h-3 w-full overflow-hidden rounded-full bg-slate-200 accent-indigo-700 [&::-webkit-progress-bar]:bg-slate-200 [&::-webkit-progress-value]:bg-indigo-600 [&::-moz-progress-bar]:bg-indigo-600 dark:bg-slate-700 dark:[&::-webkit-progress-bar]:bg-slate-700"
            ></progress>
        </div>
    }
}

/// One dated event.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimelineEvent {
    /// When, as shown to the person, such as "2024-03-01 14:00" or "Yesterday".
    pub date: String,
    /// What happened, in a few words.
    pub title: String,
    /// More detail, one or two sentences.
    #[serde(default)]
    pub description: Option<String>,
}

/// Props of the `Timeline` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimelineProps {
    /// The events in display order (oldest first unless the page says otherwise), often bound
    /// with {"$data": "/events"}.
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub events: Option<Vec<TimelineEvent>>,
}

impl ComponentProps for TimelineProps {
    const NAME: &'static str = "Timeline";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "Dated events in order; each may add a description.";

    fn example() -> (Value, Value) {
        (
            json!({"events": {"$data": "/history"}}),
            json!({"history": [
                {"date": "2024-03-01 09:00", "title": "Run started"},
                {"date": "2024-03-01 09:01", "title": "Fetched 3 emails", "description": "From the inbox of ada@example.com."},
                {"date": "2024-03-01 09:02", "title": "Waiting for a person"}
            ]}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <TimelineView props=self/> }.into_any()
    }
}

/// An `<ol>` with a line on the left.
#[component]
pub fn TimelineView(props: TimelineProps) -> impl IntoView {
    let events = props.events.unwrap_or_default();
    if events.is_empty() {
        return view! { <p class=EMPTY_CLASS>"No events yet."</p> }.into_any();
    }
    let items = events
        .into_iter()
        .map(|event| {
            view! {
                <li class="relative border-l-2 border-indigo-300 pb-4 pl-4 last:pb-0 dark:border-indigo-700">
                    <span class="absolute -left-[7px] top-1.5 h-3 w-3 rounded-full bg-indigo-600" aria-hidden="true"></span>
                    <p class="text-xs font-medium uppercase tracking-wide text-slate-600 dark:text-slate-300">{event.date}</p>
                    <p class="font-medium text-slate-900 dark:text-slate-100">{event.title}</p>
                    {event.description.map(|text| view! { <p class="text-sm text-slate-700 dark:text-slate-300">{text}</p> })}
                </li>
            }
        })
        .collect_view();
    view! { <ol class="ml-2">{items}</ol> }.into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_numbers_get_thousands_separators() {
        assert_eq!(stat_text(&json!(1_234_567)), "1,234,567");
        assert_eq!(stat_text(&json!(-1200)), "-1,200");
        assert_eq!(stat_text(&json!(12)), "12");
        assert_eq!(stat_text(&json!(3.5)), "3.5");
        assert_eq!(stat_text(&json!("n/a")), "n/a");
    }
}
