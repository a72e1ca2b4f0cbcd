//! Form and Button: the one form of a page and the buttons that submit or cancel it.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::catalog::{ComponentProps, Role};
use crate::render::{FormErrorBox, NodeCtx, ACTION_FIELD, CSRF_FIELD};

/// Props of the `Form` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FormProps {
    /// A short title shown above the fields, such as "Choose emails to archive".
    #[serde(default)]
    pub title: Option<String>,
    /// One or two sentences telling the person what the form is for and what happens on submit.
    #[serde(default)]
    pub description: Option<String>,
}

impl ComponentProps for FormProps {
    const NAME: &'static str = "Form";
    const ROLE: Role = Role::Layout;
    const DESCRIPTION: &'static str = "The one form, holding every field and Button.";

    fn example() -> (Value, Value) {
        (
            json!({"title": "Archive old emails", "description": "Pick what to archive; nothing is deleted."}),
            json!({}),
        )
    }

    fn render(self, node: &NodeCtx<'_>, children: Vec<AnyView>) -> AnyView {
        let ctx = node.ctx;
        view! {
            <FormView
                dom_id=node.dom_id()
                props=self
                action=ctx.action.clone()
                csrf_token=ctx.csrf_token.clone()
                form_error=ctx.form.form_error.clone()
                content=children
            />
        }
        .into_any()
    }
}

/// A `<form method="post">` with the CSRF token, the form-level error and the children.
#[component]
pub fn FormView(
    dom_id: String,
    props: FormProps,
    action: Option<String>,
    csrf_token: Option<String>,
    form_error: Option<String>,
    content: Vec<AnyView>,
) -> impl IntoView {
    let title_id = format!("{dom_id}-title");
    let labelled_by = props.title.as_ref().map(|_| title_id.clone());
    view! {
        <form
            id=dom_id
            method="post"
            action=action
            aria-labelledby=labelled_by
            class="space-y-5 rounded-lg border border-slate-200 bg-white p-6 shadow-sm dark:border-slate-700 dark:bg-slate-800"
            data-testid="page-form"
        >
            {csrf_token.map(|token| view! { <input type="hidden" name=CSRF_FIELD value=token/> })}
            {props
                .title
                .map(|title| {
                    view! {
                        <h2 id=title_id class="text-xl font-semibold text-slate-900 dark:text-slate-100">
                            {title}
                        </h2>
                    }
                })}
            {props
                .description
                .map(|text| view! { <p class="text-slate-700 dark:text-slate-300">{text}</p> })}
            {form_error.map(|message| view! { <FormErrorBox message/> })}
            {content}
        </form>
    }
}

/// Button styles.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ButtonVariant {
    // The main action, indigo.
    #[default]
    Primary,
    // A secondary action, outlined.
    Secondary,
    // A destructive action, red.
    Danger,
    // A confirming action, green.
    Success,
}

/// What a button does.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ButtonKind {
    // Submits the form.
    #[default]
    Submit,
    // Submits `_action=cancel`: the person declines; fields are not validated.
    Cancel,
}

/// Props of the `Button` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ButtonProps {
    /// The button text: a verb for what happens, such as "Archive 3 emails".
    pub label: String,
    /// Look: primary (main action, default), secondary, danger (destructive) or success.
    #[serde(default)]
    pub variant: ButtonVariant,
    /// submit (default) sends the form; cancel sends `_action=cancel` so the workflow can stop.
    #[serde(default)]
    pub kind: ButtonKind,
}

impl ComponentProps for ButtonProps {
    const NAME: &'static str = "Button";
    const ROLE: Role = Role::Action;
    const DESCRIPTION: &'static str = "Submits the Form, or declines with kind cancel.";

    fn example() -> (Value, Value) {
        (
            json!({"label": "Archive selected", "variant": "primary", "kind": "submit"}),
            json!({}),
        )
    }

    fn check(&self) -> Result<(), String> {
        if self.label.trim().is_empty() {
            return Err("`label` must not be empty".to_owned());
        }
        Ok(())
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <ButtonView dom_id=node.dom_id() props=self/> }.into_any()
    }
}

/// A native submit button; cancel is a submit button with `_action=cancel`.
#[component]
pub fn ButtonView(dom_id: String, props: ButtonProps) -> impl IntoView {
    let colours = match props.variant {
        ButtonVariant::Primary => "bg-indigo-700 text-white hover:bg-indigo-800 focus:ring-indigo-500",
        ButtonVariant::Secondary => "border border-slate-400 bg-white text-slate-900 hover:bg-slate-100 focus:ring-indigo-500 dark:bg-slate-800 dark:text-slate-100 dark:hover:bg-slate-700",
        ButtonVariant::Danger => "bg-red-700 text-white hover:bg-red-800 focus:ring-red-500",
        ButtonVariant::Success => "bg-green-700 text-white hover:bg-green-800 focus:ring-green-500",
    };
    let class = format!(
        "me-3 inline-flex items-center justify-center rounded-md px-4 py-2 font-semibold shadow-sm focus:outline-none focus:ring-2 focus:ring-offset-2 {colours}"
    );
    let value = match props.kind {
        ButtonKind::Submit => "submit",
        ButtonKind::Cancel => "cancel",
    };
    view! {
        <button id=dom_id type="submit" name=ACTION_FIELD value=value class=class formnovalidate=props.kind == ButtonKind::Cancel>
            {props.label}
        </button>
    }
}
