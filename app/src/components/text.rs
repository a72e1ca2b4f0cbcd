//! Text, Heading, Alert, Badge, Divider and Code: components that show words.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::catalog::{ComponentProps, Role};
use crate::render::NodeCtx;

/// Props of the `Text` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TextProps {
    /// The paragraph, as plain text (no HTML or Markdown); line breaks are kept.
    pub text: String,
    /// Show it smaller and grey, for secondary remarks.
    #[serde(default)]
    pub muted: bool,
}

impl ComponentProps for TextProps {
    const NAME: &'static str = "Text";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "Plain text, no HTML or Markdown.";

    fn example() -> (Value, Value) {
        (
            json!({"text": "{{/count}} emails are older than a year. Choose which ones to archive."}),
            json!({"count": 3}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <TextView props=self/> }.into_any()
    }
}

/// A plain-text paragraph.
#[component]
pub fn TextView(props: TextProps) -> impl IntoView {
    let class = if props.muted {
        "whitespace-pre-line text-sm text-slate-600 dark:text-slate-300"
    } else {
        "whitespace-pre-line text-slate-800 dark:text-slate-200"
    };
    view! { <p class=class>{props.text}</p> }
}

/// Props of the `Heading` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeadingProps {
    /// The heading text.
    pub text: String,
    /// 1 for the page title (once per page), 2 for sections (default), 3 and 4 for subsections.
    #[serde(default = "default_level")]
    #[schemars(range(min = 1, max = 4))]
    pub level: u8,
}

fn default_level() -> u8 {
    2
}

impl ComponentProps for HeadingProps {
    const NAME: &'static str = "Heading";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str =
        "Page title (level 1, once, first) or section title (2 to 4, in order).";

    fn example() -> (Value, Value) {
        (
            json!({"text": "Inbox clean-up for {{/user}}", "level": 1}),
            json!({"user": "Ada"}),
        )
    }

    fn check(&self) -> Result<(), String> {
        if !(1..=4).contains(&self.level) {
            return Err(format!("`level` must be 1 to 4, not {}", self.level));
        }
        Ok(())
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <HeadingView dom_id=node.dom_id() props=self/> }.into_any()
    }
}

/// An `<h1>`–`<h4>`.
#[component]
pub fn HeadingView(dom_id: String, props: HeadingProps) -> impl IntoView {
    let text = props.text;
    match props.level {
        1 => view! { <h1 id=dom_id class="text-3xl font-bold tracking-tight text-slate-900 dark:text-slate-100">{text}</h1> }.into_any(),
        2 => view! { <h2 id=dom_id class="text-2xl font-semibold text-slate-900 dark:text-slate-100">{text}</h2> }.into_any(),
        3 => view! { <h3 id=dom_id class="text-xl font-semibold text-slate-900 dark:text-slate-100">{text}</h3> }.into_any(),
        _ => view! { <h4 id=dom_id class="text-lg font-semibold text-slate-900 dark:text-slate-100">{text}</h4> }.into_any(),
    }
}

/// How urgent an Alert or Badge is.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Tone {
    // Grey, no meaning (badges only).
    Neutral,
    // Blue: for information.
    #[default]
    Info,
    // Green: something went well.
    Success,
    // Amber: needs attention.
    Warning,
    // Red: something failed.
    Error,
}

impl Tone {
    fn box_class(self) -> &'static str {
        match self {
            Self::Neutral => "border-slate-300 bg-slate-50 text-slate-800 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-100",
            Self::Info => "border-sky-300 bg-sky-50 text-sky-900 dark:border-sky-700 dark:bg-sky-950 dark:text-sky-100",
            Self::Success => "border-green-300 bg-green-50 text-green-900 dark:border-green-700 dark:bg-green-950 dark:text-green-100",
            Self::Warning => "border-amber-300 bg-amber-50 text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100",
            Self::Error => "border-red-300 bg-red-50 text-red-900 dark:border-red-700 dark:bg-red-950 dark:text-red-100",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Neutral => "Note",
            Self::Info => "Information",
            Self::Success => "Success",
            Self::Warning => "Warning",
            Self::Error => "Error",
        }
    }
}

/// Props of the `Alert` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AlertProps {
    /// info (default), success, warning or error.
    #[serde(default)]
    pub tone: Tone,
    /// A short bold first line.
    #[serde(default)]
    pub title: Option<String>,
    /// The message, as plain text.
    pub text: String,
}

impl ComponentProps for AlertProps {
    const NAME: &'static str = "Alert";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "A message the person must notice.";

    fn example() -> (Value, Value) {
        (
            json!({"tone": "warning", "title": "Archiving is final",
                   "text": "Archived emails leave the inbox of {{/user}} but stay searchable."}),
            json!({"user": "ada@example.com"}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <AlertView props=self/> }.into_any()
    }
}

/// A message box; errors and warnings are announced (`role="alert"`), the rest are `status`.
#[component]
pub fn AlertView(props: AlertProps) -> impl IntoView {
    let role = match props.tone {
        Tone::Error | Tone::Warning => "alert",
        Tone::Neutral | Tone::Info | Tone::Success => "status",
    };
    let class = format!("rounded-md border p-4 {}", props.tone.box_class());
    let title = props.title.unwrap_or_else(|| props.tone.label().to_owned());
    view! {
        <div role=role class=class>
            <p class="font-semibold">{title}</p>
            <p class="mt-1 whitespace-pre-line">{props.text}</p>
        </div>
    }
}

/// Props of the `Badge` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BadgeProps {
    /// One or two words, such as "Overdue".
    pub text: String,
    /// neutral, info (default), success, warning or error.
    #[serde(default)]
    pub tone: Tone,
}

impl ComponentProps for BadgeProps {
    const NAME: &'static str = "Badge";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "One or two words of status.";

    fn example() -> (Value, Value) {
        (
            json!({"text": "{{/status}}", "tone": "success"}),
            json!({"status": "Ready"}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <BadgeView props=self/> }.into_any()
    }
}

/// An inline pill.
#[component]
pub fn BadgeView(props: BadgeProps) -> impl IntoView {
    let class = format!(
        "inline-flex w-fit items-center rounded-full border px-2.5 py-0.5 text-xs font-semibold {}",
        props.tone.box_class()
    );
    view! { <span class=class>{props.text}</span> }
}

/// Props of the `Divider` component (none).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DividerProps {}

impl ComponentProps for DividerProps {
    const NAME: &'static str = "Divider";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "A horizontal rule between parts.";

    fn example() -> (Value, Value) {
        (json!({}), json!({}))
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <DividerView/> }.into_any()
    }
}

/// An `<hr>`.
#[component]
pub fn DividerView() -> impl IntoView {
    view! { <hr class="border-slate-200 dark:border-slate-700"/> }
}

/// Props of the `Code` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CodeProps {
    /// The text shown exactly as it is, in a fixed-width font: a diff, a log excerpt, a command.
    #[schemars(extend("x-bindable" = true))]
    pub code: String,
    /// A label naming the language or format, such as "diff" or "log".
    #[serde(default)]
    pub language: Option<String>,
}

impl ComponentProps for CodeProps {
    const NAME: &'static str = "Code";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "Verbatim fixed-width text: diffs, logs, snippets.";

    fn example() -> (Value, Value) {
        (
            json!({"language": "log", "code": {"$data": "/log"}}),
            json!({"log": "12:00 fetched 3 emails\n12:01 waiting for a person"}),
        )
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <CodeView dom_id=node.dom_id() props=self/> }.into_any()
    }
}

/// A `<pre><code>` block with an optional language label; focusable so it scrolls by keyboard.
#[component]
pub fn CodeView(dom_id: String, props: CodeProps) -> impl IntoView {
    let label_id = format!("{dom_id}-label");
    let empty = props.code.is_empty();
    view! {
        <figure id=dom_id class="overflow-hidden rounded-md border border-slate-300 dark:border-slate-600">
            {props
                .language
                .map(|language| {
                    view! {
                        <figcaption
                            id=label_id
                            class="border-b border-slate-300 bg-slate-100 px-3 py-1 text-xs font-semibold uppercase tracking-wide text-slate-700 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-200"
                        >
                            {language}
                        </figcaption>
                    }
                })}
            <pre
                tabindex="0"
                class="overflow-x-auto bg-slate-50 p-3 text-sm leading-relaxed text-slate-900 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:bg-slate-900 dark:text-slate-100"
            >
                <code>{if empty { "(empty)".to_owned() } else { props.code }}</code>
            </pre>
        </figure>
    }
}
