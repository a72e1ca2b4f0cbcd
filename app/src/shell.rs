//! The HTML document every server-rendered page sits in.
//!
//! One shell for all pages so the stylesheet, the hydration scripts and the skip link are never
//! forgotten by a single page.

use leptos::prelude::*;

// `<title>` cannot hold the `<!>` hydration markers Leptos puts after dynamic text (they would show
// in the tab), so its content is set as escaped markup instead.
use crate::{escape::escape_text, theme::ThemeToggle};

/// Where the compiled browser assets live; built by the server from its configuration.
#[derive(Clone, Debug)]
pub struct ShellOptions {
    /// Leptos site options (output name and pkg directory) used by the hydration scripts.
    pub leptos: LeptosOptions,
    /// The page title, shown in the tab and read by screen readers first.
    pub title: String,
    /// Who is looking: the header offers the admin pages to admins only.
    pub viewer: Viewer,
}

/// Who a document is rendered for, as far as the header is concerned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Viewer {
    /// Nobody signed in: a link holder or a stranger.
    #[default]
    Anonymous,
    /// The administrator (admin session).
    Admin,
    /// A person signed in through an e-mailed link, by address.
    Person(String),
}

const NAV_LINK: &str = "text-slate-700 hover:underline dark:text-slate-200";

/// The header's links for `viewer`: the admin pages for the admin, the inbox and sign-out for a
/// signed-in person, the sign-in link for everyone else.
#[component]
fn NavLinks(viewer: Viewer) -> impl IntoView {
    match viewer {
        Viewer::Admin => view! {
            <a href="/runs" class=NAV_LINK>"Runs"</a>
            <a href="/components" class=NAV_LINK>"Components"</a>
            <a href="/chat" class=NAV_LINK>"Chat"</a>
        }
        .into_any(),
        Viewer::Person(email) => view! {
            <a href="/inbox" class=NAV_LINK data-testid="nav-inbox">"Inbox"</a>
            <span class="text-sm text-slate-600 dark:text-slate-300" data-testid="signed-in-as">{email}</span>
            <form method="post" action="/sign-out">
                <button type="submit" class=NAV_LINK data-testid="sign-out">"Sign out"</button>
            </form>
        }
        .into_any(),
        Viewer::Anonymous => view! {
            <a href="/sign-in" class=NAV_LINK data-testid="nav-sign-in">"Sign in"</a>
        }
        .into_any(),
    }
}

/// The script that loads the browser bundle when the page is idle and hydrates its islands.
///
/// Copied from leptos 0.8.23 (`src/hydration/island_script.js`, MIT licence), which does not
/// export it; keep it in step when upgrading leptos.
const ISLAND_SCRIPT: &str = include_str!("island_script.js");

/// The islands hydration scripts: [`HydrationScripts`] with `islands=true`, but with valid
/// resource hints.
///
/// leptos 0.8's `HydrationScripts` writes the CSP nonce into the `crossorigin` attribute of its
/// `modulepreload` and `preload` links, which only takes `anonymous` or `use-credentials`, so every
/// page failed the HTML checker. The nonce belongs on the inline script alone (the preloads are
/// same-origin URLs that `script-src 'self'` allows); `anonymous` is the mode the bundle's
/// `import()` and the wasm `fetch` use, so the preloaded responses are the ones reused.
#[component]
fn IslandScripts(options: LeptosOptions) -> impl IntoView {
    let nonce = leptos::nonce::use_nonce();
    let output_name = options.output_name.to_string();
    // As leptos does: cargo-leptos names the wasm file after LEPTOS_OUTPUT_NAME when it builds
    // the server; a plain wasm-bindgen build adds `_bg`.
    let wasm_name = if option_env!("LEPTOS_OUTPUT_NAME").is_some() {
        output_name.clone()
    } else {
        format!("{output_name}_bg")
    };
    let pkg_path = options.site_pkg_dir.to_string();
    let call =
        format!("{ISLAND_SCRIPT}(\"\", {pkg_path:?}, {output_name:?}, {wasm_name:?}, false);");
    view! {
        <link rel="modulepreload" href=format!("/{pkg_path}/{output_name}.js") crossorigin="anonymous"/>
        <link
            rel="preload"
            href=format!("/{pkg_path}/{wasm_name}.wasm")
            r#as="fetch"
            r#type="application/wasm"
            crossorigin="anonymous"
        />
        <script type="module" nonce=nonce>
            {call}
        </script>
    }
}

/// The document: head with stylesheet and island hydration scripts, a header, then `children`.
#[component]
pub fn Shell(options: ShellOptions, children: Children) -> impl IntoView {
    let ShellOptions {
        leptos,
        title,
        viewer,
    } = options;
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
                <IslandScripts options=leptos/>
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
                        <NavLinks viewer/>
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

/// The whole document around `body`, as HTML: the [`Shell`] rendered once here, so the server's
/// handlers, which only call this, instantiate none of its rendering.
#[must_use]
pub fn document_html(options: ShellOptions, body: AnyView) -> String {
    view! { <Shell options>{body}</Shell> }.to_html()
}
