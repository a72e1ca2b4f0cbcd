//! The life of a page link: opening it (GET never changes anything) and submitting it (exactly
//! once, in one transaction with the run's resumption).
//!
//! Every refusal is a distinct outcome so the HTTP edge can answer 404 / 409 / 410 / 422 / 403
//! without guessing; none of them says anything about other tokens. A submitted page's receipt
//! (and its downloads) is shown for `TESSERA_RECEIPT_LIFETIME_SECS` after the answer, then the
//! link answers like an expired one: the answer stays with the run, not at a link that may be
//! forwarded or left in a mailbox.

use std::{collections::BTreeMap, time::Duration};

use serde::Deserialize as _;
use serde_json::Value;
use tessera_app::{
    catalog::Catalog,
    components::paging::{navigation_query, state_query},
    components::record_list::navigation::{apply_record_action, record_action},
    render::{FormState, CSRF_FIELD, DECLINE_REASON_FIELD},
    tree::PageTree,
};

use super::{
    component_set::UnknownComponent,
    csrf::CsrfKey,
    history::{EventKind, NewEvent},
    page::{Page, PageStatus, SubmitOutcome},
    people::{answers_of, clean_reason, AnswerRecord, Assignee, Given},
    receipt::cancelled_response,
    submission::{read_fields, read_submission, with_decisions, Submission},
    token::PageToken,
};
use crate::{
    forms::{pairs, raw_values, FormSchema, Offered},
    store::records::unanswered::{declined_by, declined_response, Decline, Unanswered},
    store::{answers::AssigneeAnswered, Store, StoreError},
};

/// The catalog a stored page renders with (the components it recorded): what its controls offer
/// is worked out with it.
pub type PageCatalog<'a> = &'a (dyn Fn(&Page) -> Result<Catalog, UnknownComponent> + Sync);

/// A link and what it opens: the page, whose link it is, and everyone the page is for.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The page.
    pub page: Page,
    /// The assignee this link belongs to; `None` for a page's one anonymous link.
    pub holder: Option<Assignee>,
    /// Every assignee of the page, in the ask's order, with their answers; empty for a page
    /// with one anonymous link.
    pub people: Vec<Assignee>,
}

/// Whether whoever is looking may answer through a link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// They may: the page asks for no sign-in, or they are signed in as the link's assignee.
    Admitted,
    /// The page wants its assignee (this address) signed in first.
    SignInFirst(String),
    /// Someone else is signed in.
    SomeoneElse {
        /// Whom the link is for.
        holder: String,
        /// Who is signed in.
        signed_in: String,
    },
}

impl Link {
    /// Who may answer through this link: whoever holds it, or — on a page with `sign_in:
    /// "required"` — only its assignee, signed in as themselves (`signed_in`, compared without
    /// case). A group's member has a row and a link of their own address, so a member answers as
    /// themselves too.
    #[must_use]
    pub fn admits(&self, signed_in: Option<&str>) -> Admission {
        let Some(holder) = self.holder.as_ref().filter(|_| self.page.sign_in_required) else {
            return Admission::Admitted;
        };
        match signed_in {
            Some(person) if person.eq_ignore_ascii_case(&holder.email) => Admission::Admitted,
            Some(person) => Admission::SomeoneElse {
                holder: holder.email.clone(),
                signed_in: person.to_owned(),
            },
            None => Admission::SignInFirst(holder.email.clone()),
        }
    }

    /// The answers given on the page so far, oldest first.
    #[must_use]
    pub fn answers(&self) -> Vec<AnswerRecord> {
        answers_of(
            &self.people,
            self.page.response.as_ref(),
            self.page.submitted_at_ms,
        )
    }
}

/// What opening a link shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Opened {
    /// The page, ready to fill in.
    Open(Link),
    /// Already answered — by this link, or the page was settled by others: the read-only
    /// receipt.
    Receipt(Link),
    /// Answered longer ago than receipts are kept.
    ReceiptExpired,
    /// Past its expiry.
    Expired,
    /// Withdrawn by the workflow's author.
    Revoked,
    /// No such link (or a malformed one).
    NotFound,
}

/// Looks up a link at `now_ms`: a page's anonymous link, or an assignee's; a receipt is shown
/// for `receipt_lifetime` after the answer. Never writes.
///
/// # Errors
/// Database failures.
pub async fn open_page(
    store: &Store,
    token: &str,
    now_ms: i64,
    receipt_lifetime: Duration,
) -> Result<Opened, StoreError> {
    let Some(token) = PageToken::parse(token) else {
        return Ok(Opened::NotFound);
    };
    let link = match store.page_by_token(&token.hash()).await {
        Ok(page) => Link {
            page,
            holder: None,
            people: Vec::new(),
        },
        Err(StoreError::NotFound) => match store.assignee_by_token(&token.hash()).await {
            Ok((page, mut holder)) => {
                let people = store.assignees_of(page.id).await?;
                // A group votes once: a member whose group has answered sees its answer.
                if holder.answer.is_none() {
                    holder.answer = holder.group.as_ref().and_then(|group| {
                        people
                            .iter()
                            .filter(|person| person.group.as_ref() == Some(group))
                            .find_map(|person| person.answer.clone())
                    });
                }
                Link {
                    page,
                    holder: Some(holder),
                    people,
                }
            }
            Err(StoreError::NotFound) => return Ok(Opened::NotFound),
            Err(error) => return Err(error),
        },
        Err(error) => return Err(error),
    };
    Ok(opened(link, now_ms, receipt_lifetime))
}

/// What a view an MCP host holds shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Viewed {
    /// Its page is still being made: ask again shortly.
    Preparing,
    /// Its run ended (failed or cancelled) without making the page; it never will.
    Unmade,
    /// Its page, as the page's anonymous link would show it.
    Page(Box<Opened>),
}

/// Looks up the page a view an MCP host holds shows ([`Store::add_page_view`]) at `now_ms`.
/// Never writes.
///
/// # Errors
/// Database failures.
pub async fn open_view(
    store: &Store,
    view: &str,
    now_ms: i64,
    receipt_lifetime: Duration,
) -> Result<Viewed, StoreError> {
    let Some(view) = PageToken::parse(view) else {
        return Ok(Viewed::Page(Box::new(Opened::NotFound)));
    };
    match store.page_by_view(&view.hash()).await {
        Ok((_, Some(page))) => Ok(viewed_page(page, now_ms, receipt_lifetime)),
        Ok((run_id, None)) => {
            if !store.run(run_id).await?.is_finished() {
                return Ok(Viewed::Preparing);
            }
            // The page may have been made, answered and the run finished since it was looked
            // up: look once more before saying it never came.
            match store.page_by_view(&view.hash()).await? {
                (_, Some(page)) => Ok(viewed_page(page, now_ms, receipt_lifetime)),
                (_, None) => Ok(Viewed::Unmade),
            }
        }
        Err(StoreError::NotFound) => Ok(Viewed::Page(Box::new(Opened::NotFound))),
        Err(error) => Err(error),
    }
}

/// What a view shows of its page: what the page's one anonymous link would.
fn viewed_page(page: Page, now_ms: i64, receipt_lifetime: Duration) -> Viewed {
    let link = Link {
        page,
        holder: None,
        people: Vec::new(),
    };
    Viewed::Page(Box::new(opened(link, now_ms, receipt_lifetime)))
}

/// What `link` shows at `now_ms`.
fn opened(link: Link, now_ms: i64, receipt_lifetime: Duration) -> Opened {
    let answered = link
        .holder
        .as_ref()
        .is_some_and(|holder| holder.answer.is_some());
    match link.page.status {
        PageStatus::Submitted if link.page.receipt_expired(now_ms, receipt_lifetime) => {
            Opened::ReceiptExpired
        }
        _ if answered => Opened::Receipt(link),
        PageStatus::Submitted => Opened::Receipt(link),
        PageStatus::Revoked => Opened::Revoked,
        PageStatus::Open if link.page.is_expired(now_ms) => Opened::Expired,
        PageStatus::Open => Opened::Open(link),
    }
}

impl Opened {
    /// The link, when it is open to a submission; otherwise what a submission to it comes to.
    fn for_submission(self) -> Result<Link, Box<Submitted>> {
        Err(Box::new(match self {
            Self::Open(link) => return Ok(link),
            Self::Receipt(link) => Submitted::AlreadySubmitted(link),
            Self::Expired | Self::ReceiptExpired => Submitted::Expired,
            Self::Revoked => Submitted::Revoked,
            Self::NotFound => Submitted::NotFound,
        }))
    }
}

/// What a submission came to.
#[derive(Clone, Debug, PartialEq)]
pub enum Submitted {
    /// Recorded; the run (if any) is ready to continue when this answer settled the page.
    Accepted(Link),
    /// Wrong or missing values: show the page again with this state (nothing was stored).
    Invalid(Link, FormState),
    /// A table's search, sort or page button, or a record list's add or remove button: show the
    /// page again with the person's values (records renumbered) and this render query. Nothing
    /// was validated or stored; the link stays open.
    Navigated(Link, FormState, BTreeMap<String, String>),
    /// This link answered before, or the page was settled by others: the receipt.
    AlreadySubmitted(Link),
    /// The CSRF token is missing or belongs to another page.
    Forbidden,
    /// The page is display-only and takes no answer.
    NoForm,
    /// Past its expiry.
    Expired,
    /// Withdrawn.
    Revoked,
    /// No such link.
    NotFound,
}

/// Why a submission failed on our side.
#[derive(Debug, thiserror::Error)]
pub enum PagesError {
    /// The store failed; nothing was recorded.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The page's stored schema no longer loads (corrupt or from a newer version).
    #[error("stored schema of page {page} does not load: {reason}")]
    StoredSchema {
        /// The page.
        page: String,
        /// Why.
        reason: String,
    },
    /// The page's stored tree no longer reads (corrupt or from a newer version).
    #[error("stored tree of page {page} does not load: {reason}")]
    StoredTree {
        /// The page.
        page: String,
        /// Why.
        reason: String,
    },
    /// The page was made with a component this server no longer has, so what it offers cannot be
    /// worked out (it cannot be shown either).
    #[error("page {page} cannot be checked: {source}")]
    UnknownComponent {
        /// The page.
        page: String,
        /// The component.
        source: UnknownComponent,
    },
}

/// Decodes, validates and records a submission of the link `token`: the answer must name only
/// what the page offers ([`Offered`], worked out from its stored tree and data with the catalog
/// `catalog_for` gives for it). A Decline (`_action=decline`, with `_reason`) is offered on every
/// page that takes an answer; a Cancel only where the page shows a Cancel button, and on an
/// assignee's link it is their decline (one person cannot cancel an ask for everyone). A page
/// answered longer than `receipt_lifetime` ago is [`Submitted::Expired`], its receipt no longer
/// shown.
///
/// # Errors
/// [`PagesError`] when the store fails, or the stored schema, tree or components are unreadable;
/// the person's submission is then not recorded and they can send it again.
pub async fn submit_page(
    store: &Store,
    csrf: &CsrfKey,
    catalog_for: PageCatalog<'_>,
    token: &str,
    body: &[u8],
    now_ms: i64,
    receipt_lifetime: Duration,
) -> Result<Submitted, PagesError> {
    let link = match open_page(store, token, now_ms, receipt_lifetime)
        .await?
        .for_submission()
    {
        Ok(link) => link,
        Err(submitted) => return Ok(*submitted),
    };
    let page = &link.page;
    let presented = pairs(body)
        .into_iter()
        .rev()
        .find(|(key, _)| key == CSRF_FIELD)
        .map(|(_, value)| value);
    if !presented.is_some_and(|value| csrf.verify(page.id, &value)) {
        return Ok(Submitted::Forbidden);
    }
    let reached = Reached {
        store,
        catalog_for,
        via: Via::Link(token),
        now_ms,
        receipt_lifetime,
    };
    reached.submit(link, body).await
}

/// Decodes, validates and records a submission through a view an MCP host holds, exactly as
/// [`submit_page`] does through the page's link: the same answer, the same once. The view is
/// the capability, so there is no CSRF token (the body comes in a tool call, not from a
/// browser holding cookies).
///
/// # Errors
/// As [`submit_page`].
pub async fn submit_view(
    store: &Store,
    catalog_for: PageCatalog<'_>,
    view: &str,
    body: &[u8],
    now_ms: i64,
    receipt_lifetime: Duration,
) -> Result<Submitted, PagesError> {
    let opened = match open_view(store, view, now_ms, receipt_lifetime).await? {
        Viewed::Page(opened) => *opened,
        // No form was shown yet, so nothing could have been submitted from one.
        Viewed::Preparing => return Ok(Submitted::NotFound),
        Viewed::Unmade => return Ok(Submitted::Revoked),
    };
    let link = match opened.for_submission() {
        Ok(link) => link,
        Err(submitted) => return Ok(*submitted),
    };
    let reached = Reached {
        store,
        catalog_for,
        via: Via::View,
        now_ms,
        receipt_lifetime,
    };
    reached.submit(link, body).await
}

/// How a submission reached its page.
#[derive(Clone, Copy)]
enum Via<'a> {
    /// The page's link (anonymous or an assignee's), as a browser posts it.
    Link(&'a str),
    /// A view of a page with one anonymous answer.
    View,
}

/// A submission that reached an open page, with what deciding it needs.
struct Reached<'a> {
    store: &'a Store,
    catalog_for: PageCatalog<'a>,
    via: Via<'a>,
    now_ms: i64,
    receipt_lifetime: Duration,
}

impl Reached<'_> {
    /// Decodes, validates and records `body` for the open page `link`.
    async fn submit(&self, link: Link, body: &[u8]) -> Result<Submitted, PagesError> {
        let Reached {
            store,
            catalog_for,
            via,
            now_ms,
            receipt_lifetime,
        } = *self;
        let page = &link.page;
        let Some(schema) = &page.schema else {
            return Ok(Submitted::NoForm);
        };
        // Adding or removing a record is navigation too: the page again with every typed value,
        // the records renumbered, nothing validated or recorded.
        let sent = pairs(body);
        if let Some(action) = record_action(&sent) {
            let form = FormState {
                values: apply_record_action(&action, raw_values(&with_decisions(body))),
                ..FormState::default()
            };
            return Ok(Submitted::Navigated(link, form, state_query(&sent)));
        }
        if let Some(query) = navigation_query(&sent) {
            let form = FormState {
                values: raw_values(&with_decisions(body)),
                ..FormState::default()
            };
            return Ok(Submitted::Navigated(link, form, query));
        }
        let schema =
            FormSchema::from_json_schema(schema).map_err(|error| PagesError::StoredSchema {
                page: page.id.to_string(),
                reason: error.to_string(),
            })?;
        let offered = offered_by(page, catalog_for)?;
        let submission = match read_submission(&schema, &offered.values, body) {
            // Only a page that shows a Cancel button can be answered with one; an assignee's Cancel
            // is their decline.
            Submission::Cancelled if link.holder.is_some() => {
                Submission::Declined(clean_reason(reason_in(body).as_deref()))
            }
            Submission::Cancelled if !offered.cancel => read_fields(&schema, &offered.values, body),
            submission => submission,
        };
        let given = match submission {
            Submission::Valid(value) => Given::Answer(value),
            Submission::Declined(None) if page.decline_reason_required => {
                let form = decline_needs_reason(body);
                return Ok(Submitted::Invalid(link, form));
            }
            Submission::Declined(reason) => Given::Decline(reason),
            Submission::Cancelled => {
                return record_anonymous(store, link, &cancelled_response(), via, now_ms).await
            }
            Submission::Invalid(state) => return Ok(Submitted::Invalid(link, state)),
        };
        if link.holder.is_none() {
            let response = match &given {
                Given::Answer(value) => value.clone(),
                Given::Decline(reason) => declined_response(&Decline {
                    reason: reason.clone(),
                    by: None,
                }),
            };
            return record_anonymous(store, link, &response, via, now_ms).await;
        }
        // Only a link names an assignee; a view is of a page with one anonymous answer.
        let Via::Link(token) = via else {
            return Ok(Submitted::NotFound);
        };
        let Some(parsed) = PageToken::parse(token) else {
            return Ok(Submitted::NotFound);
        };
        let outcome = store
            .answer_as_assignee(&parsed.hash(), &given, now_ms)
            .await?;
        Ok(match outcome {
            AssigneeAnswered::Recorded { .. } => {
                match open_page(store, token, now_ms, receipt_lifetime).await? {
                    Opened::Receipt(link) | Opened::Open(link) => Submitted::Accepted(link),
                    Opened::Expired | Opened::ReceiptExpired => Submitted::Expired,
                    Opened::Revoked => Submitted::Revoked,
                    Opened::NotFound => Submitted::NotFound,
                }
            }
            AssigneeAnswered::AlreadyAnswered | AssigneeAnswered::Decided => {
                match open_page(store, token, now_ms, receipt_lifetime).await? {
                    Opened::Receipt(link) | Opened::Open(link) => Submitted::AlreadySubmitted(link),
                    Opened::Expired | Opened::ReceiptExpired => Submitted::Expired,
                    Opened::Revoked => Submitted::Revoked,
                    Opened::NotFound => Submitted::NotFound,
                }
            }
            AssigneeAnswered::Expired => Submitted::Expired,
            AssigneeAnswered::Revoked => Submitted::Revoked,
            AssigneeAnswered::NotFound => Submitted::NotFound,
        })
    }
}

/// Records `response` through a page's one anonymous link or a view of it: the page is settled by it.
async fn record_anonymous(
    store: &Store,
    link: Link,
    response: &Value,
    via: Via<'_>,
    now_ms: i64,
) -> Result<Submitted, PagesError> {
    let outcome = match via {
        Via::Link(token) => {
            let Some(token) = PageToken::parse(token) else {
                return Ok(Submitted::NotFound);
            };
            store.submit_page(&token.hash(), response, now_ms).await?
        }
        Via::View => store.answer_page(link.page.id, response, now_ms).await?,
    };
    if matches!(outcome, SubmitOutcome::Submitted(_)) {
        // The one anonymous answer in the history (a Cancel is no answer). Written after the
        // answer's own statement: a failure here is logged, and the answer stands.
        let event = match Unanswered::of(response) {
            None => Some(NewEvent::new(EventKind::Answered)),
            Some(Unanswered::Declined) => {
                let decline = declined_by(response);
                let event = NewEvent::new(EventKind::Declined);
                Some(match decline.reason {
                    Some(reason) => event.detail(reason),
                    None => event,
                })
            }
            Some(Unanswered::Cancelled | Unanswered::Expired) => None,
        };
        if let Some(event) = event {
            if let Err(error) = store.record_ask_event(link.page.id, &event, now_ms).await {
                tracing::warn!(error = %error, "recording an answer in the page's history failed");
            }
        }
    }
    Ok(match outcome {
        // The statement returned only what it wrote; the rest is the page just validated.
        SubmitOutcome::Submitted(recorded) => Submitted::Accepted(Link {
            page: Page {
                status: PageStatus::Submitted,
                response: Some(response.clone()),
                submitted_at_ms: Some(recorded.submitted_at_ms),
                ..link.page
            },
            ..link
        }),
        SubmitOutcome::AlreadySubmitted(page) => Submitted::AlreadySubmitted(Link {
            page: *page,
            ..link
        }),
        SubmitOutcome::Expired => Submitted::Expired,
        SubmitOutcome::Revoked => Submitted::Revoked,
        SubmitOutcome::NotFound => Submitted::NotFound,
    })
}

/// The reason a Decline carried, as sent.
fn reason_in(body: &[u8]) -> Option<String> {
    raw_values(body)
        .get(DECLINE_REASON_FIELD)
        .and_then(|values| values.last())
        .cloned()
}

/// The page again after a Decline without the reason the page asks for: every value kept, the
/// reason box named.
fn decline_needs_reason(body: &[u8]) -> FormState {
    let mut form = FormState {
        values: raw_values(&with_decisions(body)),
        ..FormState::default()
    };
    form.errors.insert(
        DECLINE_REASON_FIELD.to_owned(),
        "Say why you decline: this request needs a reason.".to_owned(),
    );
    form.form_error = Some("To decline, say why in the box under Decline.".to_owned());
    form
}

/// What a stored page offers: the values of its fields, and whether it has a Cancel button (a
/// Decline is offered on every page that takes an answer).
struct PageOffer {
    values: Offered,
    cancel: bool,
}

/// Works out what `page` offers from its stored tree and data, with the catalog it renders with.
/// Worked out on every submission rather than stored beside the page: tree, data and component set
/// never change once stored, so this is exactly what the page shows (ARCHITECTURE.md, "Answers are
/// bound to the page").
fn offered_by(page: &Page, catalog_for: PageCatalog<'_>) -> Result<PageOffer, PagesError> {
    let tree = PageTree::deserialize(&page.tree).map_err(|error| PagesError::StoredTree {
        page: page.id.to_string(),
        reason: error.to_string(),
    })?;
    let catalog = catalog_for(page).map_err(|source| PagesError::UnknownComponent {
        page: page.id.to_string(),
        source,
    })?;
    Ok(PageOffer {
        values: Offered::of_page(&tree, &catalog, &page.data),
        cancel: tree.offers_cancel(),
    })
}
