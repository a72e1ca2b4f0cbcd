//! How long an ask stays open and what its deadline does: `expires_in` and `on_timeout` with
//! its `default` answer.

use std::time::Duration;

use serde_json::Value;

use super::{AskError, AskTimeout, MAX_EXPIRES_IN, MIN_EXPIRES_IN};
use crate::{forms::FormSchema, pages::links::DEFAULT_EXPIRY};

/// `expires_in`: whole seconds within [`MIN_EXPIRES_IN`]..=[`MAX_EXPIRES_IN`], the pages'
/// default when absent.
pub(super) fn parse_expires_in(value: Option<Value>) -> Result<Duration, AskError> {
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

/// `on_timeout` and its `default` answer, checked against the ask's `schema`.
pub(super) fn parse_on_timeout(
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
