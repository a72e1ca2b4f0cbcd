//! The default components, and the pieces they share (field labels, help and error text,
//! option lists, URL checks, Tailwind classes).
//!
//! Each component is a props type implementing [`ComponentProps`] plus a Leptos `#[component]`
//! named `…View` that renders it. Fields follow one accessibility pattern: a visible `<label for>`
//! (or `<legend>` for groups), an id derived from the node id, `aria-describedby` naming the help
//! and the error text, `aria-invalid` when in error, and a visible required mark next to the
//! `required` attribute. All components render plain native elements so they work by keyboard and
//! without JavaScript; `MultiTextInput`'s "Add another" button and a `RecordList`'s add and
//! remove buttons are islands that spare the round trip.
//!
//! Nothing here may write raw HTML: text goes through Leptos text nodes and attributes.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::ComponentSpec;

pub mod chart;
pub mod choice;
pub mod data;
pub mod decision;
pub mod download;
pub mod fieldset;
pub mod form;
pub mod input;
pub mod layout;
pub mod link;
pub mod multi_text;
pub mod paging;
pub mod record_list;
pub mod selection_limit;
pub mod table;
mod table_rows;
pub mod text;

pub use download::{download_body, download_for_node, DownloadFile, DownloadFormat};

/// The default component specs in gallery order: forms and fields, then layout, then display.
#[must_use]
pub fn default_specs() -> Vec<ComponentSpec> {
    vec![
        ComponentSpec::of::<form::FormProps>(),
        ComponentSpec::of::<input::InputProps>(),
        ComponentSpec::of::<input::TextAreaProps>(),
        ComponentSpec::of::<choice::CheckboxProps>(),
        ComponentSpec::of::<choice::SelectProps>(),
        ComponentSpec::of::<choice::RadioGroupProps>(),
        ComponentSpec::of::<choice::CheckboxGroupProps>(),
        ComponentSpec::of::<multi_text::MultiTextInputProps>(),
        ComponentSpec::of::<fieldset::FieldsetProps>(),
        ComponentSpec::of::<record_list::RecordListProps>(),
        ComponentSpec::of::<form::ButtonProps>(),
        ComponentSpec::of::<text::TextProps>(),
        ComponentSpec::of::<text::HeadingProps>(),
        ComponentSpec::of::<layout::ContainerProps>(),
        ComponentSpec::of::<layout::CardProps>(),
        ComponentSpec::of::<table::TableProps>(),
        ComponentSpec::of::<decision::DecisionTableProps>(),
        ComponentSpec::of::<data::ListProps>(),
        ComponentSpec::of::<data::KeyValueProps>(),
        ComponentSpec::of::<text::AlertProps>(),
        ComponentSpec::of::<text::BadgeProps>(),
        ComponentSpec::of::<data::StatProps>(),
        ComponentSpec::of::<data::ProgressBarProps>(),
        ComponentSpec::of::<chart::ChartProps>(),
        ComponentSpec::of::<download::DownloadLinkProps>(),
        ComponentSpec::of::<link::LinkProps>(),
        ComponentSpec::of::<link::ImageProps>(),
        ComponentSpec::of::<text::DividerProps>(),
        ComponentSpec::of::<layout::DetailsProps>(),
        ComponentSpec::of::<data::TimelineProps>(),
        ComponentSpec::of::<text::CodeProps>(),
    ]
}

/// Classes of a text-like control (input, select, textarea); `invalid` switches to a red border.
#[must_use]
pub fn control_class(invalid: bool) -> &'static str {
    if invalid {
        "mt-1 block w-full rounded-md border border-red-600 bg-white px-3 py-2 text-slate-900 shadow-sm focus:border-red-600 focus:outline-none focus:ring-2 focus:ring-red-500 dark:bg-slate-800 dark:text-slate-100"
    } else {
        "mt-1 block w-full rounded-md border border-slate-400 bg-white px-3 py-2 text-slate-900 shadow-sm focus:border-indigo-600 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:border-slate-500 dark:bg-slate-800 dark:text-slate-100"
    }
}

/// Classes of a checkbox or radio button.
pub const TICK_CLASS: &str =
    "h-4 w-4 rounded border-slate-400 text-indigo-600 focus:ring-2 focus:ring-indigo-500 dark:border-slate-500";
/// Classes of a field label.
pub const LABEL_CLASS: &str = "block text-sm font-medium text-slate-800 dark:text-slate-200";

/// The ids of a field's help and error texts, and its `aria-describedby` value.
#[derive(Clone, Debug)]
pub struct Described {
    /// The id of the help text, when there is help.
    pub help_id: Option<String>,
    /// The id of the error message, when there is an error.
    pub error_id: Option<String>,
}

impl Described {
    /// Ids derived from the field's DOM id, present only for texts that exist.
    #[must_use]
    pub fn new(dom_id: &str, help: Option<&String>, error: Option<&String>) -> Self {
        Self {
            help_id: help.map(|_| format!("{dom_id}-help")),
            error_id: error.map(|_| format!("{dom_id}-error")),
        }
    }

    /// The `aria-describedby` value (error first), or `None` when there is nothing to describe.
    #[must_use]
    pub fn by(&self) -> Option<String> {
        let ids: Vec<&str> = [self.error_id.as_deref(), self.help_id.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        (!ids.is_empty()).then(|| ids.join(" "))
    }
}

/// The visible mark after a required field's label; the control carries `required` itself.
#[component]
pub fn RequiredMark(required: bool) -> impl IntoView {
    required.then(|| {
        view! {
            <span class="ml-0.5 text-red-700 dark:text-red-300" aria-hidden="true">
                "*"
            </span>
            <span class="sr-only">" (required)"</span>
        }
    })
}

/// A field's label, with the required mark.
#[component]
pub fn FieldLabel(for_id: String, label: String, required: bool) -> impl IntoView {
    view! {
        <label for=for_id class=LABEL_CLASS>
            {label}
            <RequiredMark required/>
        </label>
    }
}

/// A field's help text and error message, with the ids `aria-describedby` points at.
#[component]
pub fn FieldNotes(
    described: Described,
    help: Option<String>,
    error: Option<String>,
) -> impl IntoView {
    let Described { help_id, error_id } = described;
    view! {
        {help.map(|help| view! { <p id=help_id class="text-sm text-slate-600 dark:text-slate-300">{help}</p> })}
        {error
            .map(|error| {
                view! {
                    <p id=error_id class="text-sm font-medium text-red-700 dark:text-red-300" data-testid="field-error">
                        {error}
                    </p>
                }
            })}
    }
}

/// One choice of a Select, `RadioGroup` or `CheckboxGroup`: `{value, label}` or a plain string used
/// as both.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Choice {
    /// A value with its own label.
    Labelled {
        /// The submitted value.
        value: String,
        /// The text the person sees.
        label: String,
    },
    /// A value that is also its label.
    Plain(String),
}

impl Choice {
    /// The submitted value.
    #[must_use]
    pub fn value(&self) -> &str {
        match self {
            Self::Labelled { value, .. } | Self::Plain(value) => value,
        }
    }

    /// The visible label.
    #[must_use]
    pub fn label(&self) -> &str {
        match self {
            Self::Labelled { label, .. } => label,
            Self::Plain(value) => value,
        }
    }
}

/// Checks a field's name: not empty, not reserved (leading `_`), short.
///
/// # Errors
///
/// A message naming the problem.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("`name` must not be empty".to_owned());
    }
    if name.starts_with('_') {
        return Err(format!(
            "`name` \"{name}\" starts with `_`, which is reserved for the page itself"
        ));
    }
    if name.len() > 100 {
        return Err("`name` must be at most 100 characters".to_owned());
    }
    Ok(())
}

/// Checks a choice list: values are unique.
///
/// # Errors
///
/// A message naming the repeated value.
pub fn check_choices(options: &[Choice]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for option in options {
        if !seen.insert(option.value()) {
            return Err(format!("option value \"{}\" appears twice", option.value()));
        }
    }
    Ok(())
}

/// The text a data value shows as: strings as they are, numbers and booleans formatted, `null`
/// empty, arrays joined by commas, objects as compact JSON.
#[must_use]
pub fn display_text(value: &Value) -> String {
    match value {
        Value::Array(items) => items
            .iter()
            .map(display_text)
            .collect::<Vec<_>>()
            .join(", "),
        other => crate::binding::value_text(other),
    }
}

/// What kind of URL an `href` is, once it passed [`classify_href`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HrefKind {
    /// A path, query or fragment on this site.
    Relative,
    /// An `http`/`https` URL (or a protocol-relative `//host` one) to another site.
    External,
    /// A `mailto:` address.
    Mailto,
}

/// Classifies an `href`; `None` for anything that is not http, https, mailto or relative (such as
/// `javascript:`, `data:` or `vbscript:`), which must be rendered as plain text.
#[must_use]
pub fn classify_href(href: &str) -> Option<HrefKind> {
    // Browsers drop leading control characters and spaces and ignore tabs and newlines inside the
    // scheme, so check the URL the way a browser would read it.
    let cleaned: String = href
        .trim_start_matches(|character: char| character <= ' ')
        .chars()
        .filter(|character| !matches!(character, '\t' | '\n' | '\r'))
        .collect();
    if cleaned.is_empty() {
        return None;
    }
    if cleaned.starts_with("//") || cleaned.starts_with("/\\") || cleaned.starts_with("\\") {
        return Some(HrefKind::External);
    }
    let scheme_end = cleaned.find([':', '/', '?', '#']);
    match scheme_end {
        Some(index) if cleaned[index..].starts_with(':') => {
            let scheme = cleaned[..index].to_ascii_lowercase();
            match scheme.as_str() {
                "http" | "https" => Some(HrefKind::External),
                "mailto" => Some(HrefKind::Mailto),
                _ => None,
            }
        }
        _ => Some(HrefKind::Relative),
    }
}

/// Whether `src` may be an image source: `http`, `https` or a `data:image/…` URL.
#[must_use]
pub fn is_safe_image_src(src: &str) -> bool {
    let lower = src.trim_start().to_ascii_lowercase();
    lower.starts_with("https://")
        || lower.starts_with("http://")
        || lower.starts_with("data:image/")
}

/// A URL as an `href`/`src` attribute must be written: characters no URL may contain (spaces,
/// controls, `"`, `<`, `>`, `` ` ``, `{`, `|`, `}`, `\\`, `^`, a second `#`) and a `%` that starts
/// no escape are percent-encoded; everything else, escapes included, is kept.
///
/// Leptos already escapes the attribute, so this is not about safety (the scheme checks are):
/// a model- or data-written URL with such characters is invalid HTML and browsers would encode
/// them anyway, so the link points where it did, now as valid markup.
#[must_use]
pub fn attribute_url(url: &str) -> String {
    let bytes = url.as_bytes();
    let mut encoded = String::with_capacity(url.len());
    let mut seen_fragment = false;
    for (index, character) in url.char_indices() {
        let escape_follows = || {
            bytes.get(index + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(index + 2).is_some_and(u8::is_ascii_hexdigit)
        };
        let invalid = match character {
            '#' if seen_fragment => true,
            '#' => {
                seen_fragment = true;
                false
            }
            '%' => !escape_follows(),
            ' ' | '"' | '<' | '>' | '`' | '{' | '|' | '}' | '\\' | '^' => true,
            _ => character.is_control(),
        };
        if invalid {
            let mut buffer = [0_u8; 4];
            for byte in character.encode_utf8(&mut buffer).bytes() {
                encoded.push_str(&format!("%{byte:02X}"));
            }
        } else {
            encoded.push(character);
        }
    }
    encoded
}

/// A path's last member made readable for a person: `order.line_items` → "Line items",
/// `unit_price` → "Unit price". Used where a schema gives no title, so no raw path is shown.
#[must_use]
pub fn humanize_path(path: &str) -> String {
    let last = path.rsplit('.').next().unwrap_or(path);
    let last = last.split('[').next().unwrap_or(last);
    let words = last.replace(['_', '-'], " ");
    let words = words.trim();
    let mut characters = words.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => path.to_owned(),
    }
}

/// Percent-encodes a query-string component (RFC 3986 unreserved characters stay as they are).
#[must_use]
pub fn encode_query_component(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// Form values grouped by key as a submission holds them, from `(key, value)` pairs in the
/// order sent, for tests.
#[cfg(test)]
pub(crate) fn submitted_values(
    pairs: &[(&str, &str)],
) -> std::collections::BTreeMap<String, Vec<String>> {
    pairs.iter().fold(
        std::collections::BTreeMap::new(),
        |mut values, (key, value)| {
            values
                .entry((*key).to_owned())
                .or_insert_with(Vec::new)
                .push((*value).to_owned());
            values
        },
    )
}

/// Every default component's example, resolved and rendered as one page, for tests and benches.
#[cfg(test)]
pub(crate) fn render_example(name: &str) -> Result<String, String> {
    use crate::render::{render_tree, RenderCtx};
    use crate::tree::{Node, PageTree};
    let catalog = crate::catalog::Catalog::defaults();
    let spec = catalog
        .get(name)
        .ok_or_else(|| format!("no component {name}"))?;
    let (props, data) = spec.example();
    let mut tree = PageTree::default();
    let children = if spec.role == crate::catalog::Role::Layout {
        tree.nodes.insert(
            "child".to_owned(),
            Node {
                component: "Text".to_owned(),
                props: serde_json::json!({"text": "Child content"}),
                children: vec![],
            },
        );
        vec!["child".to_owned()]
    } else {
        vec![]
    };
    tree.nodes.insert(
        "ex".to_owned(),
        Node {
            component: name.to_owned(),
            props,
            children,
        },
    );
    tree.order = vec!["ex".to_owned()];
    let mut ctx = RenderCtx::new(data);
    ctx.download_base = Some("/p/token/download".to_owned());
    ctx.csrf_token = Some("csrf-token-value".to_owned());
    ctx.action = Some("/p/token".to_owned());
    Ok(Owner::new().with(|| render_tree(&tree, &ctx).to_html()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binding::resolve_props;
    use crate::catalog::Catalog;

    #[test]
    fn every_example_validates_against_its_own_spec() {
        for spec in Catalog::defaults().specs() {
            let (props, data) = spec.example();
            let resolved = resolve_props(&props, &data);
            assert_eq!((spec.validate)(&resolved), Ok(()), "{}", spec.name);
            assert!(
                crate::binding::unresolved_bindings(&props, &data).is_empty(),
                "{}",
                spec.name
            );
        }
    }

    #[test]
    fn hrefs_are_classified_like_a_browser_reads_them() {
        assert_eq!(
            classify_href("https://example.com"),
            Some(HrefKind::External)
        );
        assert_eq!(
            classify_href("HTTP://example.com"),
            Some(HrefKind::External)
        );
        assert_eq!(classify_href("//evil.example"), Some(HrefKind::External));
        assert_eq!(
            attribute_url("https://example.com/a b\"c?q=<x>#top#more"),
            "https://example.com/a%20b%22c?q=%3Cx%3E#top%23more"
        );
        assert_eq!(
            attribute_url("/runs?x=%41&y=100%"),
            "/runs?x=%41&y=100%25",
            "escapes stay, a bare percent is encoded"
        );
        assert_eq!(
            attribute_url("https://exämple.com/ü"),
            "https://exämple.com/ü"
        );
        assert_eq!(classify_href("/runs/3?x=1"), Some(HrefKind::Relative));
        assert_eq!(classify_href("#top"), Some(HrefKind::Relative));
        assert_eq!(classify_href("page.html"), Some(HrefKind::Relative));
        assert_eq!(classify_href("mailto:a@b.example"), Some(HrefKind::Mailto));
        for bad in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "java\tscript:alert(1)",
            "\u{1}javascript:x",
            "data:text/html,x",
            "vbscript:x",
            "",
        ] {
            assert_eq!(classify_href(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn image_sources_are_limited_to_http_https_and_data_images() {
        assert!(is_safe_image_src("https://example.com/a.png"));
        assert!(is_safe_image_src("data:image/png;base64,AAAA"));
        assert!(!is_safe_image_src("javascript:alert(1)"));
        assert!(!is_safe_image_src("data:text/html;base64,AAAA"));
        assert!(!is_safe_image_src("/relative.png"));
    }

    #[test]
    fn query_components_are_percent_encoded() {
        assert_eq!(
            encode_query_component("c2.subject name&x"),
            "c2.subject%20name%26x"
        );
    }
}

#[cfg(all(test, feature = "ssr"))]
mod render_tests;
