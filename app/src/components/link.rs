//! Link and Image: components that point at URLs, with the URL checks that keep them safe.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{attribute_url, classify_href, is_safe_image_src, HrefKind};
use crate::catalog::{ComponentProps, Role};
use crate::render::NodeCtx;

/// Props of the `Link` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LinkProps {
    /// Where it goes: an http(s) URL, a mailto: address or a path on this site. Other schemes are
    /// shown as plain text.
    pub href: String,
    /// The link text, saying where it leads ("Open the invoice"), never "click here".
    pub label: String,
}

impl ComponentProps for LinkProps {
    const NAME: &'static str = "Link";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "A link: http(s), mailto: or a path.";

    fn example() -> (Value, Value) {
        (
            json!({"href": "{{/url}}", "label": "Open the mailbox settings"}),
            json!({"url": "https://mail.example.com/settings"}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <LinkView props=self/> }.into_any()
    }
}

/// An `<a>`; external links open in a new tab without an opener or referrer; unsafe hrefs become
/// plain text.
#[component]
pub fn LinkView(props: LinkProps) -> impl IntoView {
    const CLASS: &str = "font-medium text-indigo-700 underline hover:text-indigo-900 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:text-indigo-300";
    let label = if props.label.trim().is_empty() {
        props.href.clone()
    } else {
        props.label
    };
    match classify_href(&props.href) {
        Some(HrefKind::External) => view! {
            <a href=attribute_url(&props.href) target="_blank" rel="noopener noreferrer" class=CLASS>
                {label}
                <span class="sr-only">" (opens in a new tab)"</span>
                <span aria-hidden="true">" \u{2197}"</span>
            </a>
        }
        .into_any(),
        Some(HrefKind::Relative | HrefKind::Mailto) => view! { <a href=attribute_url(&props.href) class=CLASS>{label}</a> }.into_any(),
        None => view! { <span class="text-slate-800 dark:text-slate-200" data-testid="unsafe-link">{label}</span> }.into_any(),
    }
}

/// Props of the `Image` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImageProps {
    /// The picture's address: an http(s) URL or a data:image/… URL.
    #[schemars(extend("x-bindable" = true))]
    pub src: String,
    /// What the picture shows, for people who cannot see it; empty only if purely decorative.
    pub alt: String,
    /// A caption shown under the picture.
    #[serde(default)]
    pub caption: Option<String>,
}

impl ComponentProps for ImageProps {
    const NAME: &'static str = "Image";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "A picture: http(s) or data:image URL.";

    fn example() -> (Value, Value) {
        (
            json!({"src": {"$data": "/logo"}, "alt": "A blue square, the team's logo", "caption": "Team logo"}),
            json!({"logo": "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHdpZHRoPSI2NCIgaGVpZ2h0PSI2NCI+PHJlY3Qgd2lkdGg9IjY0IiBoZWlnaHQ9IjY0IiBmaWxsPSIjNDMzOGNhIi8+PC9zdmc+"}),
        )
    }

    fn render(self, _node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <ImageView props=self/> }.into_any()
    }
}

/// A `<figure>` with an `<img>`; an unsafe source shows the alt text instead.
#[component]
pub fn ImageView(props: ImageProps) -> impl IntoView {
    let picture = if is_safe_image_src(&props.src) {
        view! {
            <img
                src=attribute_url(&props.src)
                alt=props.alt
                loading="lazy"
                referrerpolicy="no-referrer"
                class="max-h-96 max-w-full rounded-md border border-slate-200 dark:border-slate-700"
            />
        }
        .into_any()
    } else {
        let text = if props.alt.is_empty() {
            "Image not shown".to_owned()
        } else {
            format!("Image not shown: {}", props.alt)
        };
        view! {
            <p class="rounded-md border border-dashed border-slate-400 p-4 text-sm text-slate-700 dark:text-slate-300" data-testid="unsafe-image">
                {text}
            </p>
        }
        .into_any()
    };
    view! {
        <figure class="space-y-1">
            {picture}
            {props.caption.map(|caption| view! { <figcaption class="text-sm text-slate-600 dark:text-slate-300">{caption}</figcaption> })}
        </figure>
    }
}
