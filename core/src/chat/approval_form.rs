//! A person's answer to a pending approval, as the chat page's form sends it.
//!
//! Two forms post to `/chat/approvals/{id}`: the confirm view's (`_action=submit|cancel`, its
//! ticked `ids`, `scope`) and the short one (`decision=approve|deny`, optional `scope`), which
//! approves every previewed item. This reads either into an [`ApprovalAnswer`] and applies it
//! through the [`Orchestrator`]; every rule (only a subset of the preview, one decision per
//! confirmation) stays the orchestrator's.

use std::collections::BTreeMap;

use tessera_app::{components::paging::NAV_FIELD, render::ACTION_FIELD};

use super::{
    views::{IDS_FIELD, SCOPE_FIELD},
    ApprovalScope, ChatError, ConfirmationId, Orchestrator, SessionId, TurnOutcome,
};
use crate::store::chat::Decision;

/// Why an approval form cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalFormError {
    /// Neither `decision` nor `_action` says approve or deny.
    #[error("decision must be approve or deny")]
    Decision,
    /// `scope` is not one of the scopes a person can grant.
    #[error("scope must be once, operation or session")]
    Scope,
}

/// What the person decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Approve for `scope`; `selected` holds the ticked ids when the confirm view sent its
    /// ticks (none ticked is an empty list), `None` for every previewed item.
    Approve {
        /// How far the approval reaches.
        scope: ApprovalScope,
        /// The ticked items, when the form carried ticks.
        selected: Option<Vec<String>>,
    },
    /// Deny the call.
    Deny,
}

impl ApprovalAnswer {
    /// Reads a posted approval form; `Ok(None)` for a table's paging button, which is never a
    /// decision (the confirm table shows every row at once, so only a crafted request sends one).
    ///
    /// # Errors
    /// [`ApprovalFormError`] naming the field that says neither approve nor deny, or no scope.
    pub fn from_form(
        values: &BTreeMap<String, Vec<String>>,
    ) -> Result<Option<Self>, ApprovalFormError> {
        if values.contains_key(NAV_FIELD) {
            return Ok(None);
        }
        let last = |name: &str| {
            values
                .get(name)
                .and_then(|all| all.last())
                .map(String::as_str)
        };
        let approve = match (last("decision"), last(ACTION_FIELD)) {
            (Some("approve"), _) | (None, Some("submit")) => true,
            (Some("deny"), _) | (None, Some("cancel")) => false,
            _ => return Err(ApprovalFormError::Decision),
        };
        if !approve {
            return Ok(Some(Self::Deny));
        }
        let scope = ApprovalScope::parse(last(SCOPE_FIELD).unwrap_or("once"))
            .ok_or(ApprovalFormError::Scope)?;
        // The confirm view always sends its ticks (none ticked sends no `ids` at all).
        let selected = (last(ACTION_FIELD) == Some("submit")).then(|| {
            values
                .get(IDS_FIELD)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|item| !item.is_empty())
                .collect()
        });
        Ok(Some(Self::Approve { scope, selected }))
    }

    /// Applies the answer to `confirmation` of session `session`.
    ///
    /// # Errors
    /// As [`Orchestrator::approve_selection`] and [`Orchestrator::decide`]: a decided
    /// confirmation is a [`ChatError::Conflict`], a selection outside the preview a
    /// [`ChatError::Selection`].
    pub async fn apply(
        self,
        orchestrator: &Orchestrator,
        session: SessionId,
        confirmation: ConfirmationId,
    ) -> Result<TurnOutcome, ChatError> {
        match self {
            Self::Approve { scope, selected } => {
                orchestrator
                    .approve_selection(session, confirmation, selected.as_deref(), scope)
                    .await
            }
            Self::Deny => {
                orchestrator
                    .decide(session, confirmation, Decision::Deny)
                    .await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<String>> {
        tessera_forms::grouped(pairs.iter().copied())
    }

    #[test]
    fn the_short_form_approves_every_previewed_item_once() {
        assert_eq!(
            ApprovalAnswer::from_form(&form(&[("decision", "approve")])),
            Ok(Some(ApprovalAnswer::Approve {
                scope: ApprovalScope::Once,
                selected: None
            }))
        );
        assert_eq!(
            ApprovalAnswer::from_form(&form(&[("decision", "deny")])),
            Ok(Some(ApprovalAnswer::Deny))
        );
    }

    #[test]
    fn the_confirm_view_sends_its_ticks_even_when_none_are_ticked() {
        let ticked = form(&[(ACTION_FIELD, "submit"), (IDS_FIELD, "a"), (IDS_FIELD, "")]);
        assert_eq!(
            ApprovalAnswer::from_form(&ticked),
            Ok(Some(ApprovalAnswer::Approve {
                scope: ApprovalScope::Once,
                selected: Some(vec!["a".to_owned()])
            }))
        );
        assert_eq!(
            ApprovalAnswer::from_form(&form(&[(ACTION_FIELD, "submit")])),
            Ok(Some(ApprovalAnswer::Approve {
                scope: ApprovalScope::Once,
                selected: Some(Vec::new())
            }))
        );
        assert_eq!(
            ApprovalAnswer::from_form(&form(&[(ACTION_FIELD, "cancel")])),
            Ok(Some(ApprovalAnswer::Deny))
        );
    }

    #[test]
    fn paging_is_no_decision_and_nonsense_is_refused() {
        assert_eq!(
            ApprovalAnswer::from_form(&form(&[(NAV_FIELD, "next"), ("decision", "approve")])),
            Ok(None)
        );
        assert_eq!(
            ApprovalAnswer::from_form(&form(&[("decision", "maybe")])),
            Err(ApprovalFormError::Decision)
        );
        assert_eq!(
            ApprovalAnswer::from_form(&form(&[("decision", "approve"), (SCOPE_FIELD, "forever")])),
            Err(ApprovalFormError::Scope)
        );
    }
}
