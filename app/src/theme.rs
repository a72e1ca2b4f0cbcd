//! The light/dark theme toggle: the one island on every page.
//!
//! It proves hydration works end to end. Without JavaScript it renders as a disabled button, so
//! the page stays fully usable; after hydration it flips the `dark` class on `<html>` and remembers
//! the choice in `localStorage`.

use leptos::prelude::*;

/// A button that switches between the light and the dark theme once the page has hydrated.
#[island]
pub fn ThemeToggle() -> impl IntoView {
    let (dark, set_dark) = signal(false);
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| {
        set_dark.set(browser::stored_dark());
        set_hydrated.set(true);
    });
    Effect::new(move |_| browser::apply_dark(dark.get()));
    view! {
        <button
            type="button"
            data-testid="theme-toggle"
            data-hydrated=move || hydrated.get().to_string()
            disabled=move || !hydrated.get()
            aria-pressed=move || dark.get().to_string()
            on:click=move |_| set_dark.update(|is_dark| *is_dark = !*is_dark)
            class="rounded border border-slate-300 px-3 py-1 text-sm text-slate-800 disabled:opacity-60 dark:text-slate-100 dark:border-slate-600"
        >
            "Dark theme"
        </button>
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    const KEY: &str = "tessera-theme";

    pub fn stored_dark() -> bool {
        storage()
            .and_then(|storage| storage.get_item(KEY).ok().flatten())
            .is_some_and(|value| value == "dark")
    }

    pub fn apply_dark(dark: bool) {
        if let Some(root) = web_sys::window()
            .and_then(|window| window.document())
            .and_then(|document| document.document_element())
        {
            let _ = root.class_list().toggle_with_force("dark", dark);
        }
        if let Some(storage) = storage() {
            let _ = storage.set_item(KEY, if dark { "dark" } else { "light" });
        }
    }

    fn storage() -> Option<web_sys::Storage> {
        web_sys::window().and_then(|window| window.local_storage().ok().flatten())
    }
}

#[cfg(not(feature = "hydrate"))]
mod browser {
    pub fn stored_dark() -> bool {
        false
    }

    pub fn apply_dark(_dark: bool) {}
}
