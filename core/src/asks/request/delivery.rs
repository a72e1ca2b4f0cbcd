//! Where an ask's news goes: `notify` (the server's channels or the ask's own recipients, each
//! within the operator's allowlist) and `callback_url`.
//!
//! Only the shapes and the allowlists are checked here; whether a URL reaches a public address is
//! `NewAsk::check_destinations`'s job (in `destinations.rs`), which resolves names.

use serde_json::{Map, Value};

use super::{AskCapabilities, AskError};
use crate::notify::{AskRecipients, RecipientAllowlist};

/// `notify`: `true` for the server's channels (refused when it has none), or the ask's own
/// recipients; `(false, None)` when absent.
pub(super) fn parse_notify(
    value: Option<Value>,
    can: &AskCapabilities,
) -> Result<(bool, Option<AskRecipients>), AskError> {
    match value {
        None | Some(Value::Null | Value::Bool(false)) => Ok((false, None)),
        Some(Value::Bool(true)) if can.notify => Ok((true, None)),
        Some(Value::Bool(true)) => Err(AskError::invalid(
            "notify",
            "no notification channel is configured on this server (TESSERA_NTFY_URL, TESSERA_WEBHOOK_URL or TESSERA_SMTP_HOST)",
        )),
        Some(Value::Object(named)) => Ok((false, Some(parse_recipients(named, &can.recipients)?))),
        Some(_) => Err(AskError::invalid(
            "notify",
            "must be true, false or the recipients, e.g. {\"email\": [\"a@example.com\"]}",
        )),
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
        Some(Value::Object(ntfy)) => recipients.ntfy_topic = Some(ntfy_topic(&ntfy, allowlist)?),
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
        Some(Value::String(raw)) => recipients.webhook = Some(webhook(&raw, allowlist)?.into()),
        Some(_) => return Err(AskError::invalid("notify.webhook", "must be a URL")),
    }
    if recipients == AskRecipients::default() {
        return Err(AskError::invalid("notify", "names no recipient"));
    }
    Ok(recipients)
}

/// `notify.ntfy.topic`: a topic's name within `TESSERA_ASK_NTFY_TOPICS`.
fn ntfy_topic(
    ntfy: &Map<String, Value>,
    allowlist: &RecipientAllowlist,
) -> Result<String, AskError> {
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
    Ok(topic)
}

/// `notify.webhook`: an absolute http(s) URL within `TESSERA_ASK_WEBHOOK_URLS`.
fn webhook(raw: &str, allowlist: &RecipientAllowlist) -> Result<url::Url, AskError> {
    let url = url::Url::parse(raw.trim())
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
        .ok_or_else(|| AskError::invalid("notify.webhook", "must be an absolute http(s) URL"))?;
    // The URL is not echoed: its path is often a credential.
    if !allowlist.allows_webhook(&url) {
        return Err(AskError::invalid(
            "notify.webhook",
            "is outside the URLs asks may name (TESSERA_ASK_WEBHOOK_URLS)",
        ));
    }
    Ok(url)
}

/// An e-mail address an ask names at `field` (a recipient or an assignee), trimmed, refused
/// unless it parses and the operator's `TESSERA_ASK_EMAIL_TO` allows it.
pub(super) fn allowed_address(
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

/// `callback_url`: an absolute http(s) URL, and only when the server can sign callbacks.
pub(super) fn parse_callback_url(
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
