//! Form and Button: the one form of a page and the buttons that submit, cancel or decline it.
//!
//! Decline is a first-class answer: on a page that takes one (the server sets
//! [`RenderCtx::decline`](crate::render::RenderCtx::decline)) the Form ends with the Decline
//! control — a disclosure holding a reason box and a button sending `_action=decline` — unless
//! the tree places a Button of kind `decline`, which renders the same control where it stands.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::catalog::{ComponentProps, Role};
use crate::components::input::{TextAreaProps, TextAreaView};
use crate::render::{
    DeclineOffer, FieldState, FormErrorBox, NodeCtx, ACTION_FIELD, CSRF_FIELD, DECLINE_REASON_FIELD,
};

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

    fn render(self, node: &NodeCtx<'_>, mut children: Vec<AnyView>) -> AnyView {
        let ctx = node.ctx;
        let dom_id = node.dom_id();
        if let Some(offer) = ctx.decline.filter(|offer| !offer.placed) {
            let label = "Decline".to_owned();
            children.push(
                view! { <DeclineControl dom_id=format!("{dom_id}-decline") label offer state=node.field(DECLINE_REASON_FIELD)/> }
                    .into_any(),
            );
        }
        view! {
            <FormView
                dom_id
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
    // Submits `_action=cancel`: the person stops the request; fields are not validated.
    Cancel,
    // Opens a reason box and submits `_action=decline`: the person refuses, saying why.
    Decline,
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
    /// submit (default) sends the form; cancel sends `_action=cancel` so the workflow can stop;
    /// decline opens a reason box and sends `_action=decline` (the person refuses, saying why).
    #[serde(default)]
    pub kind: ButtonKind,
}

impl ComponentProps for ButtonProps {
    const NAME: &'static str = "Button";
    const ROLE: Role = Role::Action;
    const DESCRIPTION: &'static str =
        "Submits the Form; kind cancel stops it, kind decline refuses with a reason.";

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
        if self.kind == ButtonKind::Decline {
            let offer = node.ctx.decline.unwrap_or_default();
            let state = node.field(DECLINE_REASON_FIELD);
            return view! { <DeclineControl dom_id=node.dom_id() label=self.label offer state/> }
                .into_any();
        }
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
        ButtonKind::Decline => "decline",
    };
    view! {
        <button id=dom_id type="submit" name=ACTION_FIELD value=value class=class formnovalidate=props.kind == ButtonKind::Cancel>
            {props.label}
        </button>
    }
}

/// The Decline control: a disclosure with the reason box and a button sending `_action=decline`.
///
/// The reason box is never `required` in HTML, since the form's own submit button would then be
/// blocked by an empty reason; the server refuses a Decline without the reason a page asks for,
/// and the disclosure opens again with the message beside the box.
#[component]
pub fn DeclineControl(
    dom_id: String,
    label: String,
    offer: DeclineOffer,
    state: FieldState,
) -> impl IntoView {
    let open = state.error.is_some();
    let reason_label = if offer.reason_required {
        "Why you decline (required)"
    } else {
        "Why you decline (optional)"
    };
    let reason = TextAreaProps {
        name: DECLINE_REASON_FIELD.to_owned(),
        label: reason_label.to_owned(),
        help: None,
        placeholder: None,
        required: false,
        value: None,
        rows: Some(3),
        min_length: None,
        max_length: Some(4_000),
    };
    // Erased here, so the disclosure's view type stays shallow.
    let reason_box =
        view! { <TextAreaView dom_id=format!("{dom_id}-reason") props=reason state/> }.into_any();
    let button_class = "inline-flex items-center justify-center rounded-md border border-red-700 bg-white px-4 py-2 font-semibold text-red-800 shadow-sm hover:bg-red-50 focus:outline-none focus:ring-2 focus:ring-red-500 focus:ring-offset-2 dark:bg-slate-800 dark:text-red-300 dark:hover:bg-slate-700";
    view! {
        <details id=dom_id open=open class="rounded-md border border-slate-300 p-3 dark:border-slate-600" data-testid="decline">
            <summary class="cursor-pointer font-semibold text-slate-900 dark:text-slate-100">{format!("{label}\u{2026}")}</summary>
            <div class="mt-3 space-y-3">
                {reason_box}
                <button type="submit" name=ACTION_FIELD value="decline" formnovalidate=true class=button_class data-testid="decline-button">
                    {label}
                </button>
            </div>
        </details>
    }
}
