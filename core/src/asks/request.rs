//! The body of `POST /api/asks`, parsed into a [`NewAsk`] before anything starts.
//!
//! ```json
//! { "prompt": "Approve the Q3 budget of {{ budget.total }}?",   // required, 1 to 10,000 characters
//!   "schema": { "type": "object", "properties": {…}, "required": […] },   // optional
//!   "display": false,                               // optional: true for a page with no form
//!   "data": { … },                                  // optional, shown on the page
//!   "expires_in": 86400,                            // optional, seconds, 1 to 2,592,000
//!   "notify": true,                                 // optional, default false, or recipients:
//!   // "notify": {"ntfy": {"topic": "ops"}, "email": ["a@example.com"], "webhook": "https://…"},
//!   "callback_url": "https://example.com/hooks/ask",   // optional, http(s)
//!   "cache": "use",                                 // optional: use (default), refresh or off
//!   "assignees": ["ana@example.com", "bo@example.com", "cy@example.com"],   // optional
//!   "approvals": {"required": 2},                   // optional, with assignees: N of them
//!   "decline": {"reason": "required"},              // optional: "optional" (default) or "required"
//!   "sign_in": "required",                          // optional, with assignees: "optional" (default) or "required"
//!   "remind_after": [86400, 172800],                // optional, with assignees: seconds from creation
//!   "escalate_after": {"after": 259200, "to": ["dee@example.com"]},   // optional, with assignees
//!   "on_timeout": "decline",                        // optional: cancel (default), fail, continue, decline
//!   "default": {"approved": false} }                // with on_timeout: continue, the answer to go on with
//! ```
//!
//! - `prompt` is a minijinja template rendered against `data` before anything else, strictly: an
//!   unknown variable or a syntax error is refused naming it. Only the caller's own text is ever
//!   a template; `data` values (and a person's answers) are inserted as text, never rendered. The
//!   render is bounded (`util::templates`): a template that runs out of fuel or writes more
//!   than [`MAX_PROMPT_CHARS`] is refused naming `prompt` as soon as it does.
//! - `display: true` (without `schema`) makes a page with no form, readable until it expires.
//! - `schema` must be in the form subset (DESIGN.md §5, [`FormSchema::from_json_schema`]);
//!   without one the person is asked for one required free-text field, `answer`
//!   ([`default_schema`]).
//! - `expires_in` defaults to the pages' default (7 days).
//! - `notify: true` sends the link through every notification channel the server has
//!   configured (ntfy, webhook, e-mail); it is refused when none is. An object names the
//!   ask's own recipients instead, each within the operator's allowlist
//!   ([`RecipientAllowlist`]); one outside it is refused naming it (`notify.email[0]`).
//! - `callback_url` needs `TESSERA_WEBHOOK_SECRET`, the key deliveries are signed with. It and a
//!   named webhook must reach public addresses unless `TESSERA_OUTBOUND_ALLOW` admits the host:
//!   [`NewAsk::check_destinations`] (in `destinations.rs`) resolves them before the ask starts.
//! - `cache` is the page cache's policy for this ask's page: `use` reuses a cached page built for
//!   the same prompt *template*, schema and data shape (asks differing only in data values share
//!   it), `refresh` builds a new page and caches it, `off` neither reads nor writes the cache.
//! - `assignees` names the people who answer, by e-mail address, each within the operator's
//!   allowlist for `notify.email` (`TESSERA_ASK_EMAIL_TO`; one outside it is refused naming it,
//!   `assignees[1]`). Each gets a link of their own (e-mailed to them when SMTP is configured);
//!   there is no shared link, so `notify` cannot be combined with them. `approvals.required` (1
//!   to the number of assignees, default 1) is how many must submit; the ask is declined as soon
//!   as so many decline that it can no longer be reached (see `pages::people`).
//! - `decline.reason: "required"` makes the page's Decline ask for a reason (a Decline is offered
//!   on every page that takes an answer; its reason is optional by default).
//! - `sign_in: "required"` (with assignees) lets each person answer only when signed in as
//!   themselves through an e-mailed sign-in link, so `answered_by` is a signed-in identity, not
//!   whoever holds the link.
//!
//! - `remind_after` (at most [`MAX_REMINDERS`](crate::pages::people::MAX_REMINDERS), each from 1 second to before `expires_in`) mails
//!   everyone who has not answered yet a fresh link at each of those moments (their earlier link
//!   stops working: only a link's hash is stored). `escalate_after` adds the people in `to`
//!   (within `TESSERA_ASK_EMAIL_TO`, not asked already) if the ask is still open `after` seconds
//!   from creation: they get links of their own, by e-mail, and the approvals count them. Both
//!   are durable timers (`store::timers`): each fires once, across processes and restarts.
//! - `assignees` may name groups (`TESSERA_GROUPS`, a name without an `@`): each member gets a
//!   link of their own and the group is one vote (`pages::groups`). `approvals.stages` (instead
//!   of `assignees`) asks ordered stages, `[{"assignees", "required", "on_decline": "settle" |
//!   "continue"}]`, at most [`MAX_STAGES`](crate::pages::people::MAX_STAGES): each next stage
//!   is asked once the one before is settled.
//! - `on_timeout` is what the deadline (`expires_in`) does if the ask is still open, in the
//!   vocabulary of the YAML `wait` step: `cancel` (the default) reports `expired`, `fail` fails
//!   the run (no callback), `continue` goes on as if `default` (checked against the schema now)
//!   had been submitted, `decline` reports `declined` as a person's decline would.
//!
//! Unknown fields are refused, so a typo (`callbackUrl`) is not silently ignored.

mod deadline;
mod delivery;
mod followup;
mod people;
mod prompt;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub use self::followup::{parse_extension, parse_reissue};
use self::{
    deadline::{parse_expires_in, parse_on_timeout},
    delivery::{parse_callback_url, parse_notify},
    people::parse_people,
    prompt::{parse_prompt, render_prompt},
};
use super::{workflow::AskState, AskError};
use crate::{
    agent::CachePolicy,
    forms::FormSchema,
    net::outbound::OutboundAllow,
    notify::{AskRecipients, NotifyConfig, RecipientAllowlist},
    pages::{groups::Groups, people::People},
};

/// The fields a request may have.
const FIELDS: [&str; 16] = [
    "prompt",
    "schema",
    "display",
    "data",
    "expires_in",
    "notify",
    "callback_url",
    "cache",
    "assignees",
    "approvals",
    "decline",
    "sign_in",
    "remind_after",
    "escalate_after",
    "on_timeout",
    "default",
];
/// The longest prompt accepted, in characters.
pub const MAX_PROMPT_CHARS: usize = 10_000;
/// The shortest expiry accepted: a second, so reminders and deadlines can be tried quickly.
pub const MIN_EXPIRES_IN: Duration = Duration::from_secs(1);
/// The longest expiry accepted (30 days).
pub const MAX_EXPIRES_IN: Duration = Duration::from_secs(30 * 24 * 3600);

/// A request as sent: a JSON object, not yet checked.
#[derive(Clone, Debug)]
pub struct AskRequest(pub Value);

/// What this server can do for an ask, from its configuration.
#[derive(Clone, Debug, Default)]
pub struct AskCapabilities {
    /// At least one notification channel is configured.
    pub notify: bool,
    /// A key to sign callbacks with is configured.
    pub callbacks: bool,
    /// The recipients an ask may name itself.
    pub recipients: RecipientAllowlist,
    /// The internal hosts a callback or webhook may reach (`TESSERA_OUTBOUND_ALLOW`).
    pub outbound: OutboundAllow,
    /// The groups an ask may name as one assignee (`TESSERA_GROUPS`).
    pub groups: Groups,
}

impl AskCapabilities {
    /// What the notification settings allow an ask: `notify: true` needs a channel, a
    /// `callback_url` needs the signing key, named recipients need the allowlist; `outbound`
    /// admits internal receivers.
    #[must_use]
    pub fn of(notify: &NotifyConfig, outbound: &OutboundAllow) -> Self {
        Self {
            notify: notify.ntfy.is_some() || notify.webhook_url.is_some() || notify.email.is_some(),
            callbacks: notify.webhook_secret.is_some(),
            recipients: notify.ask_recipients.clone(),
            outbound: outbound.clone(),
            groups: Groups::default(),
        }
    }

    /// The same capabilities, with the operator's `groups` as possible assignees.
    #[must_use]
    pub fn with_groups(mut self, groups: Groups) -> Self {
        self.groups = groups;
        self
    }
}

/// A checked ask, ready to start.
#[derive(Clone, Debug)]
pub struct NewAsk {
    /// What to ask, rendered from [`NewAsk::prompt_template`] over `data`.
    pub prompt: String,
    /// The prompt as the caller wrote it (the template source).
    pub prompt_template: String,
    /// The response schema, in the form subset; `None` for a display-only page.
    pub schema: Option<FormSchema>,
    /// The data the page shows.
    pub data: Value,
    /// How long the link stays valid.
    pub expires_in: Duration,
    /// Send the link through the configured channels.
    pub notify: bool,
    /// Send the link to these recipients (checked against the allowlist).
    pub recipients: Option<AskRecipients>,
    /// Where to POST the response.
    pub callback_url: Option<url::Url>,
    /// The page cache's policy for the ask's page.
    pub cache: CachePolicy,
    /// Who answers and what settles the ask.
    pub people: People,
    /// What the deadline does if the ask is still open.
    pub on_timeout: AskTimeout,
}

/// What an ask's deadline does (`on_timeout`), in the YAML `wait` step's words.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "then", content = "default", rename_all = "lowercase")]
pub enum AskTimeout {
    /// Report `expired` and end the run cancelled.
    #[default]
    Cancel,
    /// Fail the run.
    Fail,
    /// Go on as if this answer had been submitted.
    Continue(Value),
    /// Report `declined`, as a person's decline would.
    Decline,
}

/// The schema used when a request has none: one required free-text field, `answer`.
#[must_use]
pub fn default_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "answer": { "type": "string", "title": "Your answer", "minLength": 1 }
        },
        "required": ["answer"]
    })
}

impl NewAsk {
    /// Checks every field of `request`.
    ///
    /// # Errors
    /// [`AskError::Invalid`] naming the first field at fault: not an object, an unknown field,
    /// an empty or too long prompt, a schema outside the form subset, an expiry out of range,
    /// `notify` or `callback_url` the server cannot honour, a callback that is not http(s).
    pub fn parse(request: AskRequest, can: &AskCapabilities) -> Result<Self, AskError> {
        Self::parse_beside(request, can, &[])
    }

    /// Checks `request` as [`NewAsk::parse`] does, for a door that takes fields of its own
    /// beside an ask's (the MCP tool's `wait_seconds`, `elicit`): the caller removes those
    /// first, and an unknown field's message lists them with the ask's fields.
    ///
    /// # Errors
    /// As [`NewAsk::parse`].
    pub fn parse_beside(
        request: AskRequest,
        can: &AskCapabilities,
        own_fields: &[&str],
    ) -> Result<Self, AskError> {
        let Value::Object(mut body) = request.0 else {
            return Err(AskError::invalid(
                "body",
                "the body must be a JSON object such as {\"prompt\": \"…\"}",
            ));
        };
        refuse_unknown_fields(&body, own_fields)?;
        let prompt_template = parse_prompt(body.remove("prompt"))?;
        let schema =
            parse_display_or_schema(body.remove("display").as_ref(), body.remove("schema"))?;
        let data = body
            .remove("data")
            .unwrap_or_else(|| Value::Object(Map::new()));
        let prompt = render_prompt(&prompt_template, &data)?;
        let expires_in = parse_expires_in(body.remove("expires_in"))?;
        let (notify, recipients) = parse_notify(body.remove("notify"), can)?;
        let callback_url = parse_callback_url(body.remove("callback_url"), can)?;
        let cache = parse_cache(body.remove("cache"))?;
        let people = parse_people(&mut body, expires_in, can)?;
        let on_timeout = parse_on_timeout(
            body.remove("on_timeout"),
            body.remove("default"),
            schema.as_ref(),
        )?;
        check_people_fit(&people, notify || recipients.is_some(), schema.is_some())?;
        Ok(Self {
            prompt,
            prompt_template,
            schema,
            data,
            expires_in,
            notify,
            recipients,
            callback_url,
            cache,
            people,
            on_timeout,
        })
    }

    /// The initial state of the ask's run.
    #[must_use]
    pub fn into_state(self) -> AskState {
        AskState {
            prompt: self.prompt,
            prompt_template: Some(self.prompt_template),
            schema: self
                .schema
                .map_or(Value::Null, |schema| schema.to_json_schema()),
            data: self.data,
            expires_in_secs: self.expires_in.as_secs(),
            notify: self.notify,
            recipients: self.recipients,
            callback_url: self.callback_url.map(String::from),
            cache: self.cache,
            people: self.people,
            on_timeout: self.on_timeout,
        }
    }
}

/// Refuses a field that is neither an ask's nor one of the door's `own_fields`, listing both.
fn refuse_unknown_fields(body: &Map<String, Value>, own_fields: &[&str]) -> Result<(), AskError> {
    if let Some(unknown) = body.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        let known: Vec<&str> = FIELDS.iter().chain(own_fields).copied().collect();
        return Err(AskError::invalid(
            unknown.clone(),
            format!(
                "unknown field `{unknown}`; the fields are {}",
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

/// `display` and `schema`: the response schema, or `None` for a display-only page (which
/// takes none).
fn parse_display_or_schema(
    display: Option<&Value>,
    schema: Option<Value>,
) -> Result<Option<FormSchema>, AskError> {
    let display = match display {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => return Err(AskError::invalid("display", "must be true or false")),
    };
    match (display, schema) {
        (true, None | Some(Value::Null)) => Ok(None),
        (true, Some(_)) => Err(AskError::invalid(
            "display",
            "a display-only ask shows a page with no form, so it takes no `schema`; drop one of them",
        )),
        (false, schema) => Ok(Some(parse_schema(schema)?)),
    }
}

/// An ask with assignees gives each person a link of their own, so it has no shared link to
/// notify anyone of, and it needs a form for them to answer.
fn check_people_fit(people: &People, notifies: bool, has_form: bool) -> Result<(), AskError> {
    if people.is_assigned() && notifies {
        return Err(AskError::invalid(
            "notify",
            "an ask with assignees sends each person a link of their own (by e-mail when the server has SMTP) and has no shared link to notify anyone of; drop `notify`",
        ));
    }
    if people.is_assigned() && !has_form {
        return Err(AskError::invalid(
            "assignees",
            "a display-only page takes no answer, so it has no one to assign",
        ));
    }
    Ok(())
}

fn parse_cache(value: Option<Value>) -> Result<CachePolicy, AskError> {
    match value {
        None | Some(Value::Null) => Ok(CachePolicy::Use),
        Some(Value::String(text)) => CachePolicy::parse(&text).ok_or_else(|| {
            AskError::invalid(
                "cache",
                format!("must be {}, not `{text}`", CachePolicy::SPELLINGS),
            )
        }),
        Some(_) => Err(AskError::invalid(
            "cache",
            format!("must be one of the strings {}", CachePolicy::SPELLINGS),
        )),
    }
}

fn parse_schema(value: Option<Value>) -> Result<FormSchema, AskError> {
    let schema = match value {
        None | Some(Value::Null) => default_schema(),
        Some(schema) => schema,
    };
    FormSchema::from_json_schema(&schema).map_err(|error| {
        if error.field.is_empty() {
            AskError::invalid("schema", format!("not a form schema: {}", error.reason))
        } else {
            AskError::invalid(
                format!("schema.properties.{}", error.field),
                format!("is not in the form subset: {}", error.reason),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::links::DEFAULT_EXPIRY;

    const ALL: AskCapabilities = AskCapabilities {
        notify: true,
        callbacks: true,
        recipients: RecipientAllowlist {
            ntfy_topics: Vec::new(),
            email: Vec::new(),
            webhook_prefixes: Vec::new(),
        },
        outbound: OutboundAllow::NONE,
        groups: Groups::NONE,
    };

    #[test]
    fn named_recipients_must_be_within_the_allowlist_and_are_named_when_not() -> Result<(), AskError>
    {
        let can = AskCapabilities {
            recipients: RecipientAllowlist {
                ntfy_topics: vec!["ops".into()],
                email: vec!["@example.com".into()],
                webhook_prefixes: vec!["https://hooks.example.com/".into()],
            },
            ..AskCapabilities::default()
        };
        let ask = NewAsk::parse(
            AskRequest(
                json!({"prompt": "q", "notify": {"ntfy": {"topic": "ops"}, "email": ["a@example.com"], "webhook": "https://hooks.example.com/x"}}),
            ),
            &can,
        )?;
        let recipients = ask.recipients.clone().unwrap_or_default();
        assert_eq!(recipients.ntfy_topic.as_deref(), Some("ops"));
        assert_eq!(recipients.email, ["a@example.com"]);
        assert!(
            !ask.notify,
            "only the named recipients, not the server's channels"
        );
        for (notify, field) in [
            (
                json!({"email": ["a@example.com", "b@elsewhere.org"]}),
                "notify.email[1]",
            ),
            (json!({"email": ["not an address"]}), "notify.email[0]"),
            (json!({"ntfy": {"topic": "all"}}), "notify.ntfy.topic"),
            (
                json!({"webhook": "https://hooks.example.com.evil.test/"}),
                "notify.webhook",
            ),
            (json!({"sms": "+1"}), "notify.sms"),
            (json!({}), "notify"),
            (json!("yes"), "notify"),
        ] {
            assert_eq!(
                field_of(json!({"prompt": "q", "notify": notify}), &can).as_deref(),
                Some(field)
            );
        }
        Ok(())
    }

    #[test]
    fn assignees_must_be_within_the_allowlist_and_approvals_within_their_number(
    ) -> Result<(), AskError> {
        let can = AskCapabilities {
            recipients: RecipientAllowlist {
                email: vec!["@example.com".into()],
                ..RecipientAllowlist::default()
            },
            ..AskCapabilities::default()
        };
        let ask = NewAsk::parse(
            AskRequest(
                json!({"prompt": "q", "assignees": ["a@example.com", "b@example.com", "c@example.com"], "approvals": {"required": 2}, "decline": {"reason": "required"}}),
            ),
            &can,
        )?;
        assert_eq!(ask.people.assignees.len(), 3);
        assert_eq!(ask.people.required, 2);
        assert!(ask.people.decline_reason_required);
        assert!(
            !ask.people.sign_in_required,
            "sign-in is optional by default"
        );
        let signed = NewAsk::parse(
            AskRequest(
                json!({"prompt": "q", "assignees": ["a@example.com"], "sign_in": "required"}),
            ),
            &can,
        )?;
        assert!(signed.people.sign_in_required);
        for (body, field) in [
            (
                json!({"prompt": "q", "assignees": ["a@example.com"], "sign_in": "always"}),
                "sign_in",
            ),
            (json!({"prompt": "q", "sign_in": "required"}), "sign_in"),
            (
                json!({"prompt": "q", "assignees": ["a@example.com", "x@elsewhere.org"]}),
                "assignees[1]",
            ),
            (
                json!({"prompt": "q", "assignees": ["a@example.com"], "approvals": {"required": 2}}),
                "approvals.required",
            ),
            (
                json!({"prompt": "q", "approvals": {"required": 2}}),
                "approvals.required",
            ),
            (
                json!({"prompt": "q", "assignees": ["a@example.com", "A@example.com"]}),
                "assignees",
            ),
            (
                json!({"prompt": "q", "decline": {"reason": "maybe"}}),
                "decline.reason",
            ),
            (
                json!({"prompt": "q", "assignees": ["a@example.com"], "notify": {"email": ["a@example.com"]}}),
                "notify",
            ),
        ] {
            assert_eq!(field_of(body, &can).as_deref(), Some(field));
        }
        Ok(())
    }

    fn field_of(body: Value, can: &AskCapabilities) -> Option<String> {
        match NewAsk::parse(AskRequest(body), can) {
            Err(AskError::Invalid { field, .. }) => Some(field),
            _ => None,
        }
    }

    #[test]
    fn a_prompt_alone_asks_for_one_required_answer() -> Result<(), AskError> {
        let ask = NewAsk::parse(AskRequest(json!({"prompt": "Ship it?"})), &ALL)?;
        let answer = ask
            .schema
            .as_ref()
            .and_then(|schema| schema.field("answer"));
        assert!(answer.is_some_and(|field| field.required));
        assert_eq!(ask.schema.map(|schema| schema.fields.len()), Some(1));
        assert_eq!(ask.expires_in, DEFAULT_EXPIRY);
        assert!(!ask.notify);
        Ok(())
    }

    #[test]
    fn each_bad_field_is_named() {
        assert_eq!(
            field_of(json!({"prompt": "  "}), &ALL).as_deref(),
            Some("prompt")
        );
        assert_eq!(field_of(json!({}), &ALL).as_deref(), Some("prompt"));
        assert_eq!(
            field_of(json!({"prompt": "q", "callbackUrl": "x"}), &ALL).as_deref(),
            Some("callbackUrl")
        );
        assert_eq!(
            field_of(json!({"prompt": "q", "expires_in": 0}), &ALL).as_deref(),
            Some("expires_in")
        );
        assert_eq!(
            field_of(json!({"prompt": "q", "expires_in": "1h"}), &ALL).as_deref(),
            Some("expires_in")
        );
        assert_eq!(
            field_of(json!({"prompt": "q", "callback_url": "ftp://x/y"}), &ALL).as_deref(),
            Some("callback_url")
        );
        let nested = json!({"type": "object", "properties": {"a": {"type": "object"}}});
        assert_eq!(
            field_of(json!({"prompt": "q", "schema": nested}), &ALL).as_deref(),
            Some("schema.properties.a")
        );
        assert_eq!(field_of(json!(["q"]), &ALL).as_deref(), Some("body"));
    }

    #[test]
    fn notify_and_callbacks_need_the_server_configured_for_them() {
        let none = AskCapabilities::default();
        assert_eq!(
            field_of(json!({"prompt": "q", "notify": true}), &none).as_deref(),
            Some("notify")
        );
        assert_eq!(
            field_of(
                json!({"prompt": "q", "callback_url": "https://a.example/h"}),
                &none
            )
            .as_deref(),
            Some("callback_url")
        );
        assert_eq!(
            field_of(json!({"prompt": "q", "notify": false}), &none),
            None
        );
    }
}
