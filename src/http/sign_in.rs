//! A person's sign-in by e-mailed link, and sign-out (`auth::person` holds the rules).
//!
//! `GET /sign-in` is the form; `POST /sign-in` always answers the same page, whatever the
//! address (the mail goes out after the answer). `GET /sign-in/{token}` only shows a "Sign in
//! as …" button — mail scanners that fetch links must not use them up — and `POST
//! /sign-in/{token}` uses the link and starts the person's session. After sign-in only a path
//! on this site is followed (`login::safe_next`); the default is `/inbox`.

use axum::{
    extract::{Path, Query, State},
    response::{IntoResponse, Redirect, Response},
};
use http::{HeaderValue, StatusCode};
use serde::Deserialize;
use tessera_app::access;
use tower_sessions::Session;

use super::{
    client_addr::ClientAddr, extract::Form, login::safe_next, render::html_document, AppState,
};
use crate::{
    auth::person::{PersonAddress, PersonGrant},
    pages::token::PageToken,
    store::now_ms,
};

/// The session key of a signed-in person's [`PersonGrant`].
const PERSON_KEY: &str = "person";
/// Where a person lands after signing in unless the sign-in said otherwise.
const HOME: &str = "/inbox";

/// The address of the person signed in on this session, while their grant holds.
pub async fn signed_in_person(state: &AppState, session: Option<&Session>) -> Option<String> {
    let grant = session?.get::<PersonGrant>(PERSON_KEY).await.ok()??;
    grant
        .holds(now_ms(), state.config.access.session_lifetime)
        .then_some(grant.email)
}

/// Ends a person's sign-in on `session` (the admin's login does, so one session is never both).
///
/// # Errors
/// The session store failed.
pub async fn forget_person(session: &Session) -> Result<(), tower_sessions::session::Error> {
    session.remove::<PersonGrant>(PERSON_KEY).await.map(drop)
}

/// Query of `GET /sign-in` and of the link.
#[derive(Debug, Default, Deserialize)]
pub struct NextQuery {
    next: Option<String>,
}

/// `GET /sign-in`.
pub async fn sign_in_page(
    State(state): State<AppState>,
    Query(query): Query<NextQuery>,
) -> Response {
    let next = next_or_inbox(query.next.as_deref());
    sign_in_form(&state, StatusCode::OK, next, String::new(), None).await
}

/// The sign-in form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct SignInFields {
    #[serde(default)]
    email: String,
    #[serde(default)]
    next: String,
}

/// `POST /sign-in`: the same answer for every address; the link is mailed afterwards, if the
/// address may sign in and has not had too many.
pub async fn request_link(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    Form(fields): Form<SignInFields>,
) -> Response {
    let next = next_or_inbox(Some(&fields.next));
    if let Err(wait) = state.sign_in_throttle.check_client(client) {
        let seconds = wait.as_secs().max(1);
        let message =
            format!("Too many sign-in requests from here. Wait {seconds} seconds, then try again.");
        let mut response = sign_in_form(
            &state,
            StatusCode::TOO_MANY_REQUESTS,
            next,
            fields.email,
            Some(message),
        )
        .await;
        response
            .headers_mut()
            .insert(http::header::RETRY_AFTER, HeaderValue::from(seconds));
        return response;
    }
    let address = match PersonAddress::parse(&fields.email) {
        Ok(address) => address,
        Err(message) => {
            return sign_in_form(
                &state,
                StatusCode::UNPROCESSABLE_ENTITY,
                next,
                fields.email,
                Some(message.to_owned()),
            )
            .await
        }
    };
    if state.sign_in_throttle.allows_address(&address) {
        state.sign_in_mailer.send_in_background(address, next);
    } else {
        tracing::info!(client.addr = %client, "sign-in links for one address hit their limit");
    }
    link_on_its_way(&state).await
}

/// `GET /sign-in/{token}`: the button that signs in, for a link that still works.
pub async fn confirm_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Query(query): Query<NextQuery>,
) -> Response {
    let next = next_or_inbox(query.next.as_deref());
    let Some(parsed) = PageToken::parse(&token) else {
        return link_used_up(&state).await;
    };
    match state
        .store
        .sign_in_link_email(&parsed.hash(), now_ms())
        .await
    {
        Ok(Some(email)) => confirm_form(&state, token, email, next).await,
        Ok(None) => link_used_up(&state).await,
        Err(error) => {
            tracing::error!(error = %error, "reading a sign-in link failed");
            try_again(&state).await
        }
    }
}

/// The confirmation's field.
#[derive(Debug, Default, Deserialize)]
pub struct ConfirmFields {
    #[serde(default)]
    next: String,
}

/// `POST /sign-in/{token}`: uses the link and starts the person's session under a new id.
pub async fn confirm(
    State(state): State<AppState>,
    Path(token): Path<String>,
    session: Session,
    Form(fields): Form<ConfirmFields>,
) -> Response {
    let next = next_or_inbox(Some(&fields.next));
    let Some(parsed) = PageToken::parse(&token) else {
        return link_used_up(&state).await;
    };
    let email = match state
        .store
        .consume_sign_in_link(&parsed.hash(), now_ms())
        .await
    {
        Ok(Some(email)) => email,
        Ok(None) => return link_used_up(&state).await,
        Err(error) => {
            tracing::error!(error = %error, "using a sign-in link failed");
            return try_again(&state).await;
        }
    };
    let grant = PersonGrant {
        email,
        since_ms: now_ms(),
    };
    // A respondent is never an admin: whatever this session held goes, under a new id.
    session.clear().await;
    if session.cycle_id().await.is_err() || session.insert(PERSON_KEY, grant).await.is_err() {
        return try_again(&state).await;
    }
    Redirect::to(&next).into_response()
}

/// `POST /sign-out`: ends the session, whoever it was.
pub async fn sign_out(session: Session) -> Response {
    let _ = session.flush().await;
    Redirect::to("/sign-in").into_response()
}

/// The 403 for a signed-in person on an administrator's page.
pub async fn not_for_people(state: &AppState) -> Response {
    message_page(
        state,
        StatusCode::FORBIDDEN,
        "This page is for the administrator",
        "You are signed in as a person asked for answers. What is waiting for you is in your inbox.",
    )
    .await
}

fn next_or_inbox(next: Option<&str>) -> String {
    match next.filter(|next| !next.is_empty()) {
        Some(next) => match safe_next(Some(next)).as_str() {
            "/" => HOME.to_owned(),
            safe => safe.to_owned(),
        },
        None => HOME.to_owned(),
    }
}

async fn link_on_its_way(state: &AppState) -> Response {
    let minutes = state.config.access.sign_in_link.as_secs().div_ceil(60);
    html_document(
        state,
        StatusCode::OK,
        "Check your e-mail · Tessera",
        move || access::link_sent(minutes),
    )
    .await
}

async fn link_used_up(state: &AppState) -> Response {
    message_page(
        state,
        StatusCode::GONE,
        "This sign-in link no longer works",
        "Each link signs in once, within minutes of being sent. Ask for a new one on the sign-in page.",
    )
    .await
}

async fn try_again(state: &AppState) -> Response {
    message_page(
        state,
        StatusCode::SERVICE_UNAVAILABLE,
        "Could not sign you in",
        "Something went wrong on our side. Try again in a moment.",
    )
    .await
}

async fn message_page(
    state: &AppState,
    status: StatusCode,
    heading: &'static str,
    message: &'static str,
) -> Response {
    html_document(state, status, &format!("{heading} · Tessera"), move || {
        access::sign_in_message(heading, message)
    })
    .await
}

async fn sign_in_form(
    state: &AppState,
    status: StatusCode,
    next: String,
    email: String,
    error: Option<String>,
) -> Response {
    html_document(state, status, "Sign in · Tessera", move || {
        access::sign_in_form(next, email, error.as_deref())
    })
    .await
}

async fn confirm_form(state: &AppState, token: String, email: String, next: String) -> Response {
    let action = format!("/sign-in/{token}");
    html_document(state, StatusCode::OK, "Sign in · Tessera", move || {
        access::confirm_sign_in(action, next, &email)
    })
    .await
}
