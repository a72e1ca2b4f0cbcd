//! The page around a manual tool's generated form: the tool's name, what it does, what code
//! demands before it runs, and a way back to the chat. The form itself is a page tree rendered by
//! [`crate::render::render_tree`], passed in as children.
//!
//! Views only: the server fills [`ToolSummary`] from the orchestrator's manual tools.

use leptos::prelude::*;

/// What the page says about the tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSummary {
    /// The operation.
    pub name: String,
    /// What it does.
    pub description: String,
    /// What code demands before it runs (preview, approval), in words.
    pub rules: Vec<String>,
}

/// The link to a manual tool's form.
#[must_use]
pub fn tool_href(name: &str) -> String {
    let safe: String = name
        .chars()
        .filter(|character| {
            character.is_ascii_alphanumeric() || *character == '-' || *character == '_'
        })
        .collect();
    format!("/chat/tools/{safe}")
}

/// `GET /chat/tools/{name}`: the tool's summary above its form.
#[component]
pub fn ToolFormPage(tool: ToolSummary, children: Children) -> impl IntoView {
    let ToolSummary {
        name,
        description,
        rules,
    } = tool;
    let rules = (!rules.is_empty()).then(|| {
        let items = rules
            .into_iter()
            .map(|rule| view! { <li>{rule}</li> })
            .collect_view();
        view! {
            <div class="rounded border border-amber-400 bg-amber-50 p-3 text-slate-900 dark:bg-slate-800 dark:text-slate-100" data-testid="tool-rules">
                <p class="font-semibold">"Before it runs"</p>
                <ul class="list-disc pl-6 text-sm">{items}</ul>
            </div>
        }
    });
    view! {
        <div class="space-y-4" data-testid="tool-form-page">
            <p><a href="/chat" class="text-indigo-700 underline dark:text-indigo-300">"Back to the chat"</a></p>
            <p class="text-sm text-slate-700 dark:text-slate-300">"Manual tool "<code class="font-mono">{name}</code></p>
            <p class="text-slate-700 dark:text-slate-300">{description}</p>
            {rules}
            {children()}
        </div>
    }
}

/// [`ToolFormPage`] around `form`, with its view type erased (see the crate's documentation).
#[must_use]
pub fn tool_form_page(tool: ToolSummary, form: AnyView) -> AnyView {
    view! { <ToolFormPage tool>{form}</ToolFormPage> }.into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_links_keep_only_safe_characters() {
        assert_eq!(tool_href("bulkDeleteItems"), "/chat/tools/bulkDeleteItems");
        assert_eq!(tool_href("a/../b?c"), "/chat/tools/abc");
    }
}
