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
//! - `remind_after` (at most [`MAX_REMINDERS`], each from 1 second to before `expires_in`) mails
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

use std::time::Duration;

use minijinja::ErrorKind;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{workflow::AskState, AskError};
use crate::{
    agent::CachePolicy,
    forms::FormSchema,
    net::outbound::OutboundAllow,
    notify::{AskRecipients, NotifyConfig, RecipientAllowlist},
    pages::{
        groups::Groups,
        links::DEFAULT_EXPIRY,
        people::{Escalation, OnDecline, People, Stage, MAX_ASSIGNEES, MAX_REMINDERS},
    },
    util::templates::{self, Exhausted},
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
        let prompt_template = parse_prompt(body.remove("prompt"))?;
        let display = match body.remove("display") {
            None | Some(Value::Null | Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => return Err(AskError::invalid("display", "must be true or false")),
        };
        let schema = match (display, body.remove("schema")) {
            (true, None | Some(Value::Null)) => None,
            (true, Some(_)) => {
                return Err(AskError::invalid(
                    "display",
                    "a display-only ask shows a page with no form, so it takes no `schema`; drop one of them",
                ))
            }
            (false, schema) => Some(parse_schema(schema)?),
        };
        let data = body
            .remove("data")
            .unwrap_or_else(|| Value::Object(Map::new()));
        let prompt = render_prompt(&prompt_template, &data)?;
        let expires_in = parse_expires_in(body.remove("expires_in"))?;
        let (notify, recipients) = match body.remove("notify") {
            None | Some(Value::Null | Value::Bool(false)) => (false, None),
            Some(Value::Bool(true)) if can.notify => (true, None),
            Some(Value::Bool(true)) => {
                return Err(AskError::invalid(
                    "notify",
                    "no notification channel is configured on this server (TESSERA_NTFY_URL, TESSERA_WEBHOOK_URL or TESSERA_SMTP_HOST)",
                ))
            }
            Some(Value::Object(named)) => (false, Some(parse_recipients(named, &can.recipients)?)),
            Some(_) => {
                return Err(AskError::invalid(
                    "notify",
                    "must be true, false or the recipients, e.g. {\"email\": [\"a@example.com\"]}",
                ))
            }
        };
        let callback_url = parse_callback_url(body.remove("callback_url"), can)?;
        let cache = parse_cache(body.remove("cache"))?;
        let mut people = parse_people(
            body.remove("assignees"),
            body.remove("approvals"),
            body.remove("decline"),
            body.remove("sign_in"),
            can,
        )?;
        people.remind_after = parse_reminders(body.remove("remind_after"))?;
        people.escalate = parse_escalation(body.remove("escalate_after"), can)?;
        people
            .check_timers(expires_in.as_secs())
            .map_err(|(field, reason)| AskError::invalid(field, reason))?;
        let later_stages = people
            .stages
            .iter()
            .skip(1)
            .flat_map(|stage| &stage.assignees);
        let everyone = people
            .assignees
            .iter()
            .chain(later_stages)
            .chain(people.escalate.iter().flat_map(|escalation| &escalation.to));
        let asked = can
            .groups
            .expand(everyone)
            .map_err(|reason| AskError::invalid("assignees", reason))?;
        for (index, member) in asked.iter().enumerate() {
            if asked[..index]
                .iter()
                .any(|earlier| earlier.email.eq_ignore_ascii_case(&member.email))
            {
                return Err(AskError::invalid(
                    "assignees",
                    format!("`{}` is asked twice (alone or in a group)", member.email),
                ));
            }
        }
        let on_timeout = parse_on_timeout(
            body.remove("on_timeout"),
            body.remove("default"),
            schema.as_ref(),
        )?;
        if people.is_assigned() && (notify || recipients.is_some()) {
            return Err(AskError::invalid(
                "notify",
                "an ask with assignees sends each person a link of their own (by e-mail when the server has SMTP) and has no shared link to notify anyone of; drop `notify`",
            ));
        }
        if people.is_assigned() && schema.is_none() {
            return Err(AskError::invalid(
                "assignees",
                "a display-only page takes no answer, so it has no one to assign",
            ));
        }
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

fn parse_prompt(value: Option<Value>) -> Result<String, AskError> {
    match value {
        Some(Value::String(prompt)) if prompt.trim().is_empty() => {
            Err(AskError::invalid("prompt", "must not be empty"))
        }
        Some(Value::String(prompt)) if prompt.chars().count() > MAX_PROMPT_CHARS => {
            Err(AskError::invalid(
                "prompt",
                format!("must be at most {MAX_PROMPT_CHARS} characters"),
            ))
        }
        Some(Value::String(prompt)) => Ok(prompt),
        None | Some(Value::Null) => Err(AskError::invalid(
            "prompt",
            "is required: what to ask the person",
        )),
        Some(_) => Err(AskError::invalid("prompt", "must be a string")),
    }
}

/// Renders the caller's prompt template over `data`, strictly and bounded (see the module doc).
fn render_prompt(template: &str, data: &Value) -> Result<String, AskError> {
    let environment = templates::environment();
    let compiled = templates::compile(&environment, template).map_err(|error| {
        AskError::invalid(
            "prompt",
            format!(
                "is not a valid template: {}{}",
                error.detail().unwrap_or("syntax error"),
                error
                    .line()
                    .map(|line| format!(" (line {line})"))
                    .unwrap_or_default()
            ),
        )
    })?;
    // A character takes at most four bytes: past that many, the prompt is too long whatever it is.
    let max_bytes = MAX_PROMPT_CHARS * 4;
    let rendered = templates::render(&compiled, data, max_bytes).map_err(|error| {
        match Exhausted::of(&error) {
            Some(Exhausted::Fuel) => {
                return AskError::invalid(
                    "prompt",
                    format!(
                    "takes too much work to render (more than {} template steps); loop over less",
                    templates::FUEL
                ),
                )
            }
            Some(Exhausted::Output) => {
                return AskError::invalid(
                    "prompt",
                    format!("renders to more than {MAX_PROMPT_CHARS} characters"),
                )
            }
            None => {}
        }
        if error.kind() == ErrorKind::UndefinedError {
            let mut names: Vec<String> = compiled.undeclared_variables(true).into_iter().collect();
            names.sort();
            if let Some(unknown) = names.iter().find(|name| !resolves(data, name)) {
                return AskError::invalid(
                    "prompt",
                    format!("uses the unknown variable `{unknown}`; `data` has no such value"),
                );
            }
        }
        AskError::invalid(
            "prompt",
            format!(
                "does not render over `data`: {}",
                error.detail().unwrap_or("undefined value")
            ),
        )
    })?;
    if rendered.trim().is_empty() {
        return Err(AskError::invalid("prompt", "renders to nothing"));
    }
    if rendered.chars().count() > MAX_PROMPT_CHARS {
        return Err(AskError::invalid(
            "prompt",
            format!("renders to more than {MAX_PROMPT_CHARS} characters"),
        ));
    }
    Ok(rendered)
}

/// Whether the dotted variable `name` (`role.title`) names a value in `data`.
fn resolves(data: &Value, name: &str) -> bool {
    let mut current = data;
    for part in name.split('.') {
        match current.get(part) {
            Some(next) => current = next,
            None => return false,
        }
    }
    true
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

fn parse_expires_in(value: Option<Value>) -> Result<Duration, AskError> {
    let out_of_range = || {
        AskError::invalid(
            "expires_in",
            format!(
                "must be a whole number of seconds from {} to {}",
                MIN_EXPIRES_IN.as_secs(),
                MAX_EXPIRES_IN.as_secs()
            ),
        )
    };
    match value {
        None | Some(Value::Null) => Ok(DEFAULT_EXPIRY),
        Some(Value::Number(number)) => whole_number(&number)
            .map(Duration::from_secs)
            .filter(|expires_in| (MIN_EXPIRES_IN..=MAX_EXPIRES_IN).contains(expires_in))
            .ok_or_else(out_of_range),
        Some(_) => Err(out_of_range()),
    }
}

/// `number` when it is a whole number of at least 0, also written with a zero fraction
/// (`86400.0`): JSON Schema's `integer`, which the API's document promises.
fn whole_number(number: &serde_json::Number) -> Option<u64> {
    number.as_u64().or_else(|| {
        let float = number.as_f64()?;
        let whole = float.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&float);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a whole number within u32's range"
        )]
        whole.then_some(float as u64)
    })
}

/// Checks the body of `POST /api/asks/{id}/extend`: `{"expires_in": seconds}`, required, in the
/// range `POST /api/asks` accepts.
///
/// # Errors
/// [`AskError::Invalid`] naming the field at fault.
pub fn parse_extension(request: AskRequest) -> Result<Duration, AskError> {
    let Value::Object(mut body) = request.0 else {
        return Err(AskError::invalid(
            "body",
            "the body must be a JSON object such as {\"expires_in\": 86400}",
        ));
    };
    if let Some(unknown) = body.keys().find(|key| key.as_str() != "expires_in") {
        return Err(AskError::invalid(
            unknown.clone(),
            format!("unknown field `{unknown}`; the only field is expires_in"),
        ));
    }
    match body.remove("expires_in") {
        None | Some(Value::Null) => Err(AskError::invalid(
            "expires_in",
            "is required: seconds from now until the link expires",
        )),
        value => parse_expires_in(value),
    }
}

/// Checks the body of `POST /api/asks/{id}/reissue`: none (or `{}`) for every link the ask
/// still waits on, or `{"assignee": "a@example.com"}` for one person's.
///
/// # Errors
/// [`AskError::Invalid`] naming the field at fault.
pub fn parse_reissue(request: Option<AskRequest>) -> Result<Option<String>, AskError> {
    // `null` is no body, as the document's optional body allows.
    let Some(AskRequest(body)) = request.filter(|AskRequest(body)| !body.is_null()) else {
        return Ok(None);
    };
    let Value::Object(mut body) = body else {
        return Err(AskError::invalid(
            "body",
            "the body must be empty or a JSON object such as {\"assignee\": \"a@example.com\"}",
        ));
    };
    if let Some(unknown) = body.keys().find(|key| key.as_str() != "assignee") {
        return Err(AskError::invalid(
            unknown.clone(),
            format!("unknown field `{unknown}`; the only field is assignee"),
        ));
    }
    match body.remove("assignee") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(assignee)) => Ok(Some(assignee.trim().to_owned())),
        Some(_) => Err(AskError::invalid("assignee", "must be an e-mail address")),
    }
}

/// The recipients an ask names, each checked against the operator's allowlist.
fn parse_recipients(
    mut named: Map<String, Value>,
    allowlist: &RecipientAllowlist,
) -> Result<AskRecipients, AskError> {
    const KINDS: [&str; 3] = ["ntfy", "email", "webhook"];
    if let Some(unknown) = named.keys().find(|key| !KINDS.contains(&key.as_str())) {
        return Err(AskError::invalid(
            format!("notify.{unknown}"),
            "unknown kind of recipient; the kinds are ntfy, email and webhook",
        ));
    }
    let mut recipients = AskRecipients::default();
    match named.remove("ntfy") {
        None | Some(Value::Null) => {}
        Some(Value::Object(ntfy)) => {
            let topic = match ntfy.get("topic") {
                Some(Value::String(topic)) if !topic.trim().is_empty() => topic.trim().to_owned(),
                _ => {
                    return Err(AskError::invalid(
                        "notify.ntfy.topic",
                        "must be the name of a topic",
                    ))
                }
            };
            if !allowlist.allows_topic(&topic) {
                return Err(AskError::invalid(
                    "notify.ntfy.topic",
                    format!("`{topic}` is not a topic asks may name (TESSERA_ASK_NTFY_TOPICS)"),
                ));
            }
            recipients.ntfy_topic = Some(topic);
        }
        Some(_) => {
            return Err(AskError::invalid(
                "notify.ntfy",
                "must be an object such as {\"topic\": \"ops\"}",
            ))
        }
    }
    match named.remove("email") {
        None | Some(Value::Null) => {}
        Some(Value::Array(addresses)) => {
            for (index, address) in addresses.iter().enumerate() {
                let field = format!("notify.email[{index}]");
                recipients
                    .email
                    .push(allowed_address(address, &field, allowlist)?);
            }
        }
        Some(_) => {
            return Err(AskError::invalid(
                "notify.email",
                "must be a list of addresses",
            ))
        }
    }
    match named.remove("webhook") {
        None | Some(Value::Null) => {}
        Some(Value::String(raw)) => {
            let url = url::Url::parse(raw.trim())
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
                .ok_or_else(|| {
                    AskError::invalid("notify.webhook", "must be an absolute http(s) URL")
                })?;
            // The URL is not echoed: its path is often a credential.
            if !allowlist.allows_webhook(&url) {
                return Err(AskError::invalid(
                    "notify.webhook",
                    "is outside the URLs asks may name (TESSERA_ASK_WEBHOOK_URLS)",
                ));
            }
            recipients.webhook = Some(url.into());
        }
        Some(_) => return Err(AskError::invalid("notify.webhook", "must be a URL")),
    }
    if recipients == AskRecipients::default() {
        return Err(AskError::invalid("notify", "names no recipient"));
    }
    Ok(recipients)
}

/// An e-mail address an ask names at `field` (a recipient or an assignee), trimmed, refused
/// unless it parses and the operator's `TESSERA_ASK_EMAIL_TO` allows it.
fn allowed_address(
    address: &Value,
    field: &str,
    allowlist: &RecipientAllowlist,
) -> Result<String, AskError> {
    let address = address
        .as_str()
        .map(str::trim)
        .filter(|address| address.parse::<lettre::Address>().is_ok())
        .ok_or_else(|| AskError::invalid(field, "is not an e-mail address"))?;
    if !allowlist.allows_email(address) {
        return Err(AskError::invalid(
            field,
            format!("`{address}` is not an address asks may name (TESSERA_ASK_EMAIL_TO)"),
        ));
    }
    Ok(address.to_owned())
}

/// One person or group an ask names at `field`: a group's name (no `@`) must be one of the
/// operator's groups; an address must be within the allowlist.
fn assignee(entry: &Value, field: &str, can: &AskCapabilities) -> Result<String, AskError> {
    match entry.as_str().map(str::trim) {
        Some(name) if Groups::is_group_name(name) => {
            if can.groups.members(name).is_none() {
                return Err(AskError::invalid(
                    field,
                    format!("`{name}` is neither an e-mail address nor a group (TESSERA_GROUPS)"),
                ));
            }
            Ok(name.to_owned())
        }
        _ => allowed_address(entry, field, &can.recipients),
    }
}

/// One of `approvals.stages`: `{"assignees": [...], "required": N, "on_decline": "settle" |
/// "continue"}` (`required` defaults to 1, `on_decline` to `settle`).
fn parse_stage(stage: &Value, index: usize, can: &AskCapabilities) -> Result<Stage, AskError> {
    let field = format!("approvals.stages[{index}]");
    let Value::Object(stage) = stage else {
        return Err(AskError::invalid(field, "must be an object with assignees"));
    };
    if let Some(unknown) = stage
        .keys()
        .find(|key| !matches!(key.as_str(), "assignees" | "required" | "on_decline"))
    {
        return Err(AskError::invalid(
            format!("{field}.{unknown}"),
            "unknown field; the fields are assignees, required and on_decline",
        ));
    }
    let Some(Value::Array(entries)) = stage.get("assignees") else {
        return Err(AskError::invalid(
            format!("{field}.assignees"),
            "must be a list of e-mail addresses or groups",
        ));
    };
    let assignees = entries
        .iter()
        .enumerate()
        .map(|(position, entry)| assignee(entry, &format!("{field}.assignees[{position}]"), can))
        .collect::<Result<Vec<_>, _>>()?;
    let required = match stage.get("required") {
        None | Some(Value::Null) => 1,
        Some(required) => required
            .as_u64()
            .and_then(|required| u32::try_from(required).ok())
            .ok_or_else(|| {
                AskError::invalid(format!("{field}.required"), "must be a whole number from 1")
            })?,
    };
    let on_decline = match stage.get("on_decline").and_then(Value::as_str) {
        None => OnDecline::Settle,
        Some("settle") => OnDecline::Settle,
        Some("continue") => OnDecline::Continue,
        Some(other) => {
            return Err(AskError::invalid(
                format!("{field}.on_decline"),
                format!("must be settle or continue, not `{other}`"),
            ))
        }
    };
    Ok(Stage {
        assignees,
        required,
        on_decline,
    })
}

/// `assignees`, `approvals`, `decline` and `sign_in`, each checked (see [`assignee`]).
fn parse_people(
    assignees: Option<Value>,
    approvals: Option<Value>,
    decline: Option<Value>,
    sign_in: Option<Value>,
    can: &AskCapabilities,
) -> Result<People, AskError> {
    let sign_in_required = match sign_in {
        None | Some(Value::Null) => false,
        Some(Value::String(text)) if text == "optional" => false,
        Some(Value::String(text)) if text == "required" => true,
        Some(_) => {
            return Err(AskError::invalid(
                "sign_in",
                "must be \"required\" or \"optional\"",
            ))
        }
    };
    let mut people = People {
        sign_in_required,
        ..People::default()
    };
    match assignees {
        None | Some(Value::Null) => {}
        Some(Value::Array(addresses)) => {
            if addresses.len() > MAX_ASSIGNEES {
                return Err(AskError::invalid(
                    "assignees",
                    format!("names at most {MAX_ASSIGNEES} people"),
                ));
            }
            for (index, address) in addresses.iter().enumerate() {
                let field = format!("assignees[{index}]");
                people.assignees.push(assignee(address, &field, can)?);
            }
        }
        Some(_) => {
            return Err(AskError::invalid(
                "assignees",
                "must be a list of e-mail addresses",
            ))
        }
    }
    match approvals {
        None | Some(Value::Null) => {}
        Some(Value::Object(mut approvals)) if approvals.contains_key("stages") => {
            if !people.assignees.is_empty() || approvals.len() > 1 {
                return Err(AskError::invalid(
                    "approvals.stages",
                    "stages name their own assignees and required: drop `assignees` and `approvals.required`",
                ));
            }
            let Some(Value::Array(stages)) = approvals.remove("stages") else {
                return Err(AskError::invalid(
                    "approvals.stages",
                    "must be a list such as [{\"assignees\": [\"a@example.com\"], \"required\": 1}]",
                ));
            };
            let stages = stages
                .iter()
                .enumerate()
                .map(|(index, stage)| parse_stage(stage, index, can))
                .collect::<Result<Vec<_>, _>>()?;
            people = People {
                sign_in_required,
                ..People::in_stages(stages)
            };
            people
                .check_stages()
                .map_err(|(field, reason)| AskError::invalid(field, reason))?;
        }
        Some(Value::Object(mut approvals)) => {
            if let Some(unknown) = approvals.keys().find(|key| key.as_str() != "required") {
                return Err(AskError::invalid(
                    format!("approvals.{unknown}"),
                    "unknown field; the fields are required and stages",
                ));
            }
            people.required = match approvals.remove("required") {
                Some(Value::Number(number)) => number
                    .as_u64()
                    .and_then(|required| u32::try_from(required).ok())
                    .ok_or_else(|| {
                        AskError::invalid("approvals.required", "must be a whole number from 1")
                    })?,
                _ => {
                    return Err(AskError::invalid(
                        "approvals.required",
                        "is required: how many assignees must approve",
                    ))
                }
            };
        }
        Some(_) => {
            return Err(AskError::invalid(
                "approvals",
                "must be an object such as {\"required\": 2}",
            ))
        }
    }
    if let Err(reason) = people.check() {
        let field = if reason.contains("named twice") {
            "assignees"
        } else if reason.starts_with("sign_in") {
            "sign_in"
        } else {
            "approvals.required"
        };
        return Err(AskError::invalid(field, reason));
    }
    match decline {
        None | Some(Value::Null) => {}
        Some(Value::Object(decline)) => {
            if let Some(unknown) = decline.keys().find(|key| key.as_str() != "reason") {
                return Err(AskError::invalid(
                    format!("decline.{unknown}"),
                    "unknown field; the only field is reason",
                ));
            }
            people.decline_reason_required = match decline.get("reason").and_then(Value::as_str) {
                None | Some("optional") => false,
                Some("required") => true,
                Some(other) => {
                    return Err(AskError::invalid(
                        "decline.reason",
                        format!("must be \"optional\" or \"required\", not `{other}`"),
                    ))
                }
            };
        }
        Some(_) => {
            return Err(AskError::invalid(
                "decline",
                "must be an object such as {\"reason\": \"required\"}",
            ))
        }
    }
    Ok(people)
}

/// `remind_after`: seconds from creation, at most [`MAX_REMINDERS`] (their range is checked
/// against the expiry by `People::check_timers`).
fn parse_reminders(value: Option<Value>) -> Result<Vec<u64>, AskError> {
    let list = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => {
            return Err(AskError::invalid(
                "remind_after",
                "must be a list of seconds from creation, such as [86400]",
            ))
        }
    };
    if list.len() > MAX_REMINDERS {
        return Err(AskError::invalid(
            "remind_after",
            format!("at most {MAX_REMINDERS} reminders"),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(index, after)| {
            after.as_u64().filter(|&after| after > 0).ok_or_else(|| {
                AskError::invalid(
                    format!("remind_after[{index}]"),
                    "must be a whole number of seconds from 1",
                )
            })
        })
        .collect()
}

/// `escalate_after: {"after": seconds, "to": [addresses or groups]}`, each checked by [`assignee`].
fn parse_escalation(
    value: Option<Value>,
    can: &AskCapabilities,
) -> Result<Option<Escalation>, AskError> {
    let mut escalation = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(escalation)) => escalation,
        Some(_) => {
            return Err(AskError::invalid(
                "escalate_after",
                "must be an object such as {\"after\": 86400, \"to\": [\"a@example.com\"]}",
            ))
        }
    };
    if let Some(unknown) = escalation
        .keys()
        .find(|key| !matches!(key.as_str(), "after" | "to"))
    {
        return Err(AskError::invalid(
            format!("escalate_after.{unknown}"),
            "unknown field; the fields are after and to",
        ));
    }
    let after_secs = escalation
        .remove("after")
        .and_then(|after| after.as_u64())
        .filter(|&after| after > 0)
        .ok_or_else(|| {
            AskError::invalid(
                "escalate_after.after",
                "must be a whole number of seconds from 1",
            )
        })?;
    let Some(Value::Array(addresses)) = escalation.remove("to") else {
        return Err(AskError::invalid(
            "escalate_after.to",
            "must be a list of e-mail addresses",
        ));
    };
    if addresses.len() > MAX_ASSIGNEES {
        return Err(AskError::invalid(
            "escalate_after.to",
            format!("names at most {MAX_ASSIGNEES} people"),
        ));
    }
    let to = addresses
        .iter()
        .enumerate()
        .map(|(index, address)| assignee(address, &format!("escalate_after.to[{index}]"), can))
        .collect::<Result<_, _>>()?;
    Ok(Some(Escalation { after_secs, to }))
}

/// `on_timeout` and its `default` answer, checked against the ask's `schema`.
fn parse_on_timeout(
    on_timeout: Option<Value>,
    default: Option<Value>,
    schema: Option<&FormSchema>,
) -> Result<AskTimeout, AskError> {
    let then = match on_timeout {
        None | Some(Value::Null) => None,
        Some(Value::String(then)) => Some(then),
        Some(_) => {
            return Err(AskError::invalid(
                "on_timeout",
                "must be one of cancel, fail, continue, decline",
            ))
        }
    };
    let default = default.filter(|default| !default.is_null());
    match (then.as_deref(), default) {
        (None | Some("cancel"), None) => Ok(AskTimeout::Cancel),
        (Some("fail"), None) => Ok(AskTimeout::Fail),
        (Some("decline"), None) => Ok(AskTimeout::Decline),
        (Some("continue"), Some(default)) => {
            let Some(schema) = schema else {
                return Err(AskError::invalid(
                    "on_timeout",
                    "a display-only ask takes no answer, so it has no default to continue with",
                ));
            };
            let checked = default
                .as_object()
                .ok_or_else(|| "must be an object of the schema's fields".to_owned())
                .and_then(|fields| {
                    crate::forms::validate::validate(schema, fields)
                        .map_err(|errors| errors.to_string())
                });
            checked.map_err(|reason| {
                AskError::invalid("default", format!("does not fit the schema: {reason}"))
            })?;
            Ok(AskTimeout::Continue(default))
        }
        (Some("continue"), None) => Err(AskError::invalid(
            "default",
            "`on_timeout: continue` needs the `default` answer to continue with",
        )),
        (Some("cancel" | "fail" | "decline") | None, Some(_)) => Err(AskError::invalid(
            "default",
            "a default answer is only used with `on_timeout: continue`",
        )),
        (Some(other), _) => Err(AskError::invalid(
            "on_timeout",
            format!("`{other}` is not cancel, fail, continue or decline"),
        )),
    }
}

fn parse_callback_url(
    value: Option<Value>,
    can: &AskCapabilities,
) -> Result<Option<url::Url>, AskError> {
    let raw = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(raw)) => raw,
        Some(_) => return Err(AskError::invalid("callback_url", "must be a string")),
    };
    let url = url::Url::parse(raw.trim())
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
        .ok_or_else(|| {
            AskError::invalid(
                "callback_url",
                "must be an absolute http:// or https:// URL",
            )
        })?;
    if !can.callbacks {
        return Err(AskError::invalid(
            "callback_url",
            "callbacks are signed with TESSERA_WEBHOOK_SECRET, which this server does not set",
        ));
    }
    Ok(Some(url))
}

#[cfg(test)]
mod tests {
    use super::*;

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
