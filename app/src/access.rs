//! The pages of getting in: the administrator's login, a person's sign-in by e-mailed link, and
//! the gate in front of a link that needs its assignee signed in. The rules live in the server's
//! `auth`; these only show the forms and what happened.

use leptos::prelude::*;

use crate::render::AlertBox;

const INPUT: &str = "mt-1 block w-full rounded-md border border-slate-400 bg-white px-3 py-2 text-slate-900 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:bg-slate-800 dark:text-slate-100";
const BUTTON: &str = "rounded-md bg-indigo-700 px-4 py-2 font-semibold text-white hover:bg-indigo-800 focus:outline-none focus:ring-2 focus:ring-indigo-500";

/// `GET /login`: the admin password form, with the refusal above it when there was one;
/// `next` is where a successful login goes.
#[must_use]
pub fn login_form(next: String, error: Option<&str>) -> AnyView {
    let form = OneFieldForm {
        id: "login",
        heading: "Log in",
        intro: "Runs and chat are for the administrator of this Tessera.",
        label: "Admin password",
        name: "password",
        kind: "password",
        autocomplete: "current-password",
        submit: "Log in",
    };
    one_field_form(&form, next, None, error)
}

/// `GET /sign-in`: the e-mail address form, keeping what the person typed.
#[must_use]
pub fn sign_in_form(next: String, email: String, error: Option<&str>) -> AnyView {
    let form = OneFieldForm {
        id: "sign-in",
        heading: "Sign in",
        intro: "We e-mail you a link that signs you in. No password needed.",
        label: "E-mail address",
        name: "email",
        kind: "email",
        autocomplete: "email",
        submit: "E-mail me a link",
    };
    one_field_form(&form, next, Some(email), error)
}

/// What differs between the login and the sign-in: both are one labelled field and a button,
/// posting to `/{id}`, with the refusal above them.
struct OneFieldForm {
    /// The form's path, and the prefix of its element ids (`{id}-title`, `{id}-error`, …).
    id: &'static str,
    heading: &'static str,
    intro: &'static str,
    label: &'static str,
    name: &'static str,
    kind: &'static str,
    autocomplete: &'static str,
    submit: &'static str,
}

fn one_field_form(
    form: &OneFieldForm,
    next: String,
    value: Option<String>,
    error: Option<&str>,
) -> AnyView {
    let id = form.id;
    let error_id = format!("{id}-error");
    let input_id = format!("{id}-{}", form.name);
    view! {
        <section class="mx-auto max-w-sm space-y-4" aria-labelledby=format!("{id}-title")>
            <h1 id=format!("{id}-title") class="text-2xl font-bold">{form.heading}</h1>
            <p class="text-slate-700 dark:text-slate-300">{form.intro}</p>
            {error.map(|message| view! {
                <AlertBox message=message.to_owned() id=error_id.clone()/>
            })}
            <form method="post" action=format!("/{id}") class="space-y-4">
                <input type="hidden" name="next" value=next/>
                <div>
                    <label for=input_id.clone() class="block font-medium">{form.label}</label>
                    <input id=input_id name=form.name type=form.kind required autocomplete=form.autocomplete value=value
                        aria-describedby=error.map(|_| error_id) class=INPUT/>
                </div>
                <button type="submit" data-testid=format!("{id}-submit") class=BUTTON>{form.submit}</button>
            </form>
        </section>
    }
    .into_any()
}

/// The same answer to every `POST /sign-in`, whatever the address: a link is on its way if the
/// address may sign in, valid for `minutes`.
#[must_use]
pub fn link_sent(minutes: u64) -> AnyView {
    view! {
        <section class="mx-auto max-w-md space-y-4" aria-labelledby="sent-title" data-testid="sign-in-sent">
            <h1 id="sent-title" class="text-2xl font-bold">"Check your e-mail"</h1>
            <p class="text-slate-700 dark:text-slate-300">
                {format!("If this address may sign in, a link is on its way to it. It works once, for {minutes} minutes.")}
            </p>
            <p class="text-slate-700 dark:text-slate-300">
                <a href="/sign-in" class="text-indigo-700 underline dark:text-indigo-300">"Use another address"</a>
            </p>
        </section>
    }
    .into_any()
}

/// `GET /sign-in/{token}`: one button that uses the link (posting to `action`), so a mail
/// scanner that fetches the link does not use it up.
#[must_use]
pub fn confirm_sign_in(action: String, next: String, email: &str) -> AnyView {
    let label = format!("Sign in as {email}");
    view! {
        <section class="mx-auto max-w-sm space-y-4" aria-labelledby="confirm-title">
            <h1 id="confirm-title" class="text-2xl font-bold">"Sign in"</h1>
            <form method="post" action=action class="space-y-4">
                <input type="hidden" name="next" value=next/>
                <button type="submit" data-testid="sign-in-confirm" class=BUTTON>{label}</button>
            </form>
        </section>
    }
    .into_any()
}

/// A short outcome of signing in (used up, refused, failed) with the ways on.
#[must_use]
pub fn sign_in_message(heading: &'static str, message: &'static str) -> AnyView {
    view! {
        <section class="mx-auto max-w-md space-y-4" aria-labelledby="message-title">
            <h1 id="message-title" class="text-2xl font-bold">{heading}</h1>
            <p class="text-slate-700 dark:text-slate-300">{message}</p>
            <p><a href="/sign-in" class="text-indigo-700 underline dark:text-indigo-300">"Sign in"</a>" · "
               <a href="/inbox" class="text-indigo-700 underline dark:text-indigo-300">"Your inbox"</a></p>
        </section>
    }
    .into_any()
}

/// The sign-in form a link offers, filled in with its assignee's address and coming back to
/// the link (`next`) afterwards.
#[derive(Clone, Debug)]
pub struct GateForm {
    /// Where signing in returns to: the link itself.
    pub next: String,
    /// The address the link is for.
    pub email: String,
}

/// In front of a link that needs its assignee signed in: why, and the sign-in form when
/// signing in would help (`form`); without it the page only says whom the link is for.
#[must_use]
pub fn sign_in_gate(heading: &'static str, message: String, form: Option<GateForm>) -> AnyView {
    view! {
        <section class="mx-auto max-w-md space-y-4" aria-labelledby="gate-title" data-testid="sign-in-to-answer">
            <h1 id="gate-title" class="text-2xl font-bold">{heading}</h1>
            <p class="text-slate-700 dark:text-slate-300">{message}</p>
            {form.map(|GateForm { next, email }| view! {
                <form method="post" action="/sign-in" class="space-y-4">
                    <input type="hidden" name="next" value=next/>
                    <div>
                        <label for="gate-email" class="block font-medium">"E-mail address"</label>
                        <input id="gate-email" name="email" type="email" required autocomplete="email" value=email class=INPUT/>
                    </div>
                    <button type="submit" data-testid="sign-in-submit" class=BUTTON>"E-mail me a link"</button>
                </form>
            })}
        </section>
    }
    .into_any()
}
