//! The HTML document every server-rendered page sits in.
//!
//! One shell for all pages so the stylesheet, the hydration scripts and the skip link are never
//! forgotten by a single page.

use leptos::prelude::*;

use crate::theme::ThemeToggle;

/// Where the compiled browser assets live; built by the server from its configuration.
#[derive(Clone, Debug)]
pub struct ShellOptions {
    /// Leptos site options (output name and pkg directory) used by the hydration scripts.
    pub leptos: LeptosOptions,
    /// The page title, shown in the tab and read by screen readers first.
    pub title: String,
}

/// Escapes text for an element whose content is raw text to the parser.
///
/// `<title>` cannot hold the `<!>` hydration markers Leptos puts after dynamic text (they would show
/// in the tab), so its content is set as escaped markup instead.
fn escape_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The document: head with stylesheet and island hydration scripts, a header, then `children`.
#[component]
pub fn Shell(options: ShellOptions, children: Children) -> impl IntoView {
    let ShellOptions { leptos, title } = options;
    let stylesheet = format!("/{}/{}.css", leptos.site_pkg_dir, leptos.output_name);
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <title inner_html=escape_text(&title)></title>
                <link rel="stylesheet" href=stylesheet/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <HydrationScripts options=leptos islands=true/>
            </head>
            <body class="min-h-screen bg-slate-50 text-slate-900 dark:bg-slate-900 dark:text-slate-100">
                <a
                    href="#main"
                    class="sr-only focus:not-sr-only focus:absolute focus:p-2 focus:bg-white focus:text-slate-900"
                >
                    "Skip to content"
                </a>
                <header class="border-b border-slate-200 bg-white dark:bg-slate-800 dark:border-slate-700">
                    <nav
                        aria-label="Main"
                        class="mx-auto flex max-w-5xl items-center gap-6 px-4 py-3"
                    >
                        <a href="/" class="text-lg font-bold text-indigo-700 dark:text-indigo-300">
                            "Tessera"
                        </a>
                        <a href="/runs" class="text-slate-700 hover:underline dark:text-slate-200">
                            "Runs"
                        </a>
                        <a
                            href="/components"
                            class="text-slate-700 hover:underline dark:text-slate-200"
                        >
                            "Components"
                        </a>
                        <a href="/chat" class="text-slate-700 hover:underline dark:text-slate-200">
                            "Chat"
                        </a>
                        <span class="ml-auto">
                            <ThemeToggle/>
                        </span>
                    </nav>
                </header>
                <main id="main" class="mx-auto max-w-5xl px-4 py-8">
                    {children()}
                </main>
            </body>
        </html>
    }
}
