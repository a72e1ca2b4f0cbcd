//! Who is looking at a document: the admin, a signed-in person, or nobody in particular.
//!
//! Every document's header depends on it (admin links for admins only), and every handler
//! renders through [`super::render::html_document`], so rather than thread the session through
//! each of them, [`remember_session`] keeps the request's session for the request's task and
//! [`current`] reads it when a document is rendered. A document rendered outside a request
//! (or in a task the handler spawned) is for nobody in particular: the header then offers no
//! admin link, the safe side.

use axum::{extract::Request, middleware::Next, response::Response};
use tessera_app::shell::Viewer;
use tower_sessions::Session;

use super::{login, sign_in, AppState};

tokio::task_local! {
    static SESSION: Option<Session>;
}

/// Keeps the request's session (set by the session layer outside this one) for [`current`].
pub async fn remember_session(request: Request, next: Next) -> Response {
    let session = request.extensions().get::<Session>().cloned();
    SESSION.scope(session, next.run(request)).await
}

/// Who the current request's session belongs to.
pub async fn current(state: &AppState) -> Viewer {
    let session = SESSION.try_with(Clone::clone).ok().flatten();
    if login::is_admin(state, session.as_ref()).await {
        return Viewer::Admin;
    }
    match sign_in::signed_in_person(state, session.as_ref()).await {
        Some(email) => Viewer::Person(email),
        None => Viewer::Anonymous,
    }
}
