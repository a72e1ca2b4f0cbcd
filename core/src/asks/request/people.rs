//! Who answers an ask and what settles it: `assignees` (people or groups), `approvals` (a count
//! or ordered stages), `decline`, `sign_in`, and the timers `remind_after` and `escalate_after`.

use std::time::Duration;

use serde_json::{Map, Value};

use super::{delivery::allowed_address, AskCapabilities, AskError};
use crate::pages::{
    groups::Groups,
    people::{Escalation, OnDecline, People, Stage, MAX_ASSIGNEES, MAX_REMINDERS},
};

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

/// Who answers and what settles the ask, every field of `body` about people removed and
/// checked: `assignees`, `approvals`, `decline`, `sign_in`, `remind_after` and `escalate_after`
/// (the timers within `expires_in`), and no one asked twice, alone or in a group.
pub(super) fn parse_people(
    body: &mut Map<String, Value>,
    expires_in: Duration,
    can: &AskCapabilities,
) -> Result<People, AskError> {
    let mut people = parse_answerers(
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
    check_asked_once(&people, can)?;
    Ok(people)
}

/// Refuses an ask that reaches one person twice: by name, through a group, in a later stage or
/// by escalation.
fn check_asked_once(people: &People, can: &AskCapabilities) -> Result<(), AskError> {
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
    Ok(())
}

/// `assignees`, `approvals`, `decline` and `sign_in`, each checked (see [`assignee`]).
fn parse_answerers(
    assignees: Option<Value>,
    approvals: Option<Value>,
    decline: Option<Value>,
    sign_in: Option<Value>,
    can: &AskCapabilities,
) -> Result<People, AskError> {
    let sign_in_required = parse_sign_in(sign_in)?;
    let mut people = People {
        sign_in_required,
        assignees: parse_assignees(assignees, can)?,
        ..People::default()
    };
    match approvals {
        None | Some(Value::Null) => {}
        Some(Value::Object(mut approvals)) if approvals.contains_key("stages") => {
            if !people.assignees.is_empty() || approvals.len() > 1 {
                return Err(AskError::invalid(
                    "approvals.stages",
                    "stages name their own assignees and required: drop `assignees` and `approvals.required`",
                ));
            }
            people = People {
                sign_in_required,
                ..People::in_stages(parse_stages(approvals.remove("stages"), can)?)
            };
            people
                .check_stages()
                .map_err(|(field, reason)| AskError::invalid(field, reason))?;
        }
        Some(Value::Object(approvals)) => people.required = parse_required(approvals)?,
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
    people.decline_reason_required = parse_decline(decline)?;
    Ok(people)
}

/// `sign_in`: whether each person must sign in as themselves to answer.
fn parse_sign_in(value: Option<Value>) -> Result<bool, AskError> {
    match value {
        None | Some(Value::Null) => Ok(false),
        Some(Value::String(text)) if text == "optional" => Ok(false),
        Some(Value::String(text)) if text == "required" => Ok(true),
        Some(_) => Err(AskError::invalid(
            "sign_in",
            "must be \"required\" or \"optional\"",
        )),
    }
}

/// `assignees`: at most [`MAX_ASSIGNEES`] people or groups, each checked by [`assignee`].
fn parse_assignees(value: Option<Value>, can: &AskCapabilities) -> Result<Vec<String>, AskError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(addresses)) => {
            if addresses.len() > MAX_ASSIGNEES {
                return Err(AskError::invalid(
                    "assignees",
                    format!("names at most {MAX_ASSIGNEES} people"),
                ));
            }
            addresses
                .iter()
                .enumerate()
                .map(|(index, address)| assignee(address, &format!("assignees[{index}]"), can))
                .collect()
        }
        Some(_) => Err(AskError::invalid(
            "assignees",
            "must be a list of e-mail addresses",
        )),
    }
}

/// `approvals.stages`: the list of stages, each checked by [`parse_stage`].
fn parse_stages(value: Option<Value>, can: &AskCapabilities) -> Result<Vec<Stage>, AskError> {
    let Some(Value::Array(stages)) = value else {
        return Err(AskError::invalid(
            "approvals.stages",
            "must be a list such as [{\"assignees\": [\"a@example.com\"], \"required\": 1}]",
        ));
    };
    stages
        .iter()
        .enumerate()
        .map(|(index, stage)| parse_stage(stage, index, can))
        .collect()
}

/// `approvals` without stages: `{"required": N}`, how many assignees must approve.
fn parse_required(mut approvals: Map<String, Value>) -> Result<u32, AskError> {
    if let Some(unknown) = approvals.keys().find(|key| key.as_str() != "required") {
        return Err(AskError::invalid(
            format!("approvals.{unknown}"),
            "unknown field; the fields are required and stages",
        ));
    }
    match approvals.remove("required") {
        Some(Value::Number(number)) => number
            .as_u64()
            .and_then(|required| u32::try_from(required).ok())
            .ok_or_else(|| {
                AskError::invalid("approvals.required", "must be a whole number from 1")
            }),
        _ => Err(AskError::invalid(
            "approvals.required",
            "is required: how many assignees must approve",
        )),
    }
}

/// `decline`: `{"reason": "optional" | "required"}`, whether a Decline must give a reason.
fn parse_decline(value: Option<Value>) -> Result<bool, AskError> {
    match value {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Object(decline)) => {
            if let Some(unknown) = decline.keys().find(|key| key.as_str() != "reason") {
                return Err(AskError::invalid(
                    format!("decline.{unknown}"),
                    "unknown field; the only field is reason",
                ));
            }
            match decline.get("reason").and_then(Value::as_str) {
                None | Some("optional") => Ok(false),
                Some("required") => Ok(true),
                Some(other) => Err(AskError::invalid(
                    "decline.reason",
                    format!("must be \"optional\" or \"required\", not `{other}`"),
                )),
            }
        }
        Some(_) => Err(AskError::invalid(
            "decline",
            "must be an object such as {\"reason\": \"required\"}",
        )),
    }
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
