//! Named people on a page (DESIGN.md §15): who answers through which link, what each of them
//! said, and when their answers settle the page.
//!
//! A page without assignees has one anonymous link and is settled by its one answer, as before.
//! A page with assignees has one link per person (`page_assignees` rows, each with its own token
//! hash) and no shared link; each person answers once, and the page is settled — `open →
//! submitted`, which resumes its run once — by the answer that brings the approvals to
//! `required` (the page's response is that answer) or the declines past what still lets
//! `required` be reached (the page's response is the decline marker). The arithmetic is
//! [`Tally::settles`]; the store applies it inside the transaction that records the answer.
//!
//! Nothing here reads the store or knows HTTP.

use serde::{Deserialize, Serialize};

use super::links::AssigneeLink;
use crate::notify::{send_link, AskRecipients, NotifierFor, NotifyError};

pub use tessera_store::records::people::*;

/// The most assignees one page may have.
pub const MAX_ASSIGNEES: usize = 50;
/// The most reminders one page may have: each mails everyone who has not answered, so the
/// API token alone cannot make the server send mail without end.
pub const MAX_REMINDERS: usize = 10;

/// Who answers a page and what settles it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct People {
    /// E-mail addresses, each with a link of their own; empty for one anonymous link.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assignees: Vec<String>,
    /// How many assignees must submit for the page to be settled as submitted (1 without
    /// assignees).
    #[serde(default = "one")]
    pub required: u32,
    /// Whether a Decline must say why.
    #[serde(default)]
    pub decline_reason_required: bool,
    /// Whether each assignee must be signed in as themselves to answer (`sign_in:
    /// "required"`), so `answered_by` is a signed-in identity, not whoever holds the link.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sign_in_required: bool,
    /// Seconds after the page is made at which whoever has not answered yet is reminded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remind_after: Vec<u64>,
    /// Who else is asked, and when, if the page is still open then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate: Option<Escalation>,
    /// Ordered stages, when the people are asked in turn: then `assignees` and `required` are
    /// the first stage's, and each later stage is asked once the one before is settled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Stage>,
}

/// The most stages one page may have.
pub const MAX_STAGES: usize = 5;

/// One stage of approvals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    /// Its people: addresses or groups.
    pub assignees: Vec<String>,
    /// How many of them must approve.
    pub required: u32,
    /// What enough declines in this stage do.
    #[serde(default)]
    pub on_decline: OnDecline,
}

/// People added to a page still open `after_secs` after it was made; they get links of their
/// own and the approvals count them like the others.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    /// Seconds after the page is made.
    pub after_secs: u64,
    /// Their e-mail addresses.
    pub to: Vec<String>,
}

fn one() -> u32 {
    1
}

impl Default for People {
    fn default() -> Self {
        Self {
            assignees: Vec::new(),
            required: 1,
            decline_reason_required: false,
            sign_in_required: false,
            remind_after: Vec::new(),
            escalate: None,
            stages: Vec::new(),
        }
    }
}

impl People {
    /// `assignees`, of whom one approval settles the page.
    #[must_use]
    pub fn assigned<S: Into<String>>(assignees: impl IntoIterator<Item = S>) -> Self {
        Self {
            assignees: assignees.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// The same people, `required` of whom must approve.
    #[must_use]
    pub fn required(mut self, required: u32) -> Self {
        self.required = required;
        self
    }

    /// The same people, who must give a reason when they decline.
    #[must_use]
    pub fn reason_required(mut self) -> Self {
        self.decline_reason_required = true;
        self
    }

    /// The same people, each of whom must sign in to answer.
    #[must_use]
    pub fn sign_in_required(mut self) -> Self {
        self.sign_in_required = true;
        self
    }

    /// The same people, reminded this long after the page is made if they have not answered.
    #[must_use]
    pub fn remind_after(mut self, after: impl IntoIterator<Item = std::time::Duration>) -> Self {
        self.remind_after = after.into_iter().map(|after| after.as_secs()).collect();
        self
    }

    /// The same people, with `to` asked too if the page is still open `after` it was made.
    #[must_use]
    pub fn escalate_after<S: Into<String>>(
        mut self,
        after: std::time::Duration,
        to: impl IntoIterator<Item = S>,
    ) -> Self {
        self.escalate = Some(Escalation {
            after_secs: after.as_secs(),
            to: to.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// Checks the reminders and the escalation against the page's lifetime `expires_in_secs`:
    /// each at least a second after the page is made and before it expires, at most
    /// [`MAX_REMINDERS`], assignees to remind, and an escalation to new people only.
    ///
    /// # Errors
    /// The field at fault (`remind_after`, `escalate_after`) and a sentence.
    pub fn check_timers(&self, expires_in_secs: u64) -> Result<(), (&'static str, String)> {
        let needs_assignees = |field: &'static str| {
            (
                field,
                "needs `assignees`: it reaches people by their own links".to_owned(),
            )
        };
        if !self.remind_after.is_empty() {
            if !self.is_assigned() {
                return Err(needs_assignees("remind_after"));
            }
            if self.remind_after.len() > MAX_REMINDERS {
                return Err(("remind_after", format!("at most {MAX_REMINDERS} reminders")));
            }
            if let Some(bad) = self
                .remind_after
                .iter()
                .find(|&&after| after == 0 || after >= expires_in_secs)
            {
                return Err((
                    "remind_after",
                    format!("each reminder must come from 1 second after the ask to before it expires ({expires_in_secs} s); {bad} is not"),
                ));
            }
        }
        if let Some(escalation) = &self.escalate {
            if !self.is_assigned() {
                return Err(needs_assignees("escalate_after"));
            }
            if escalation.after_secs == 0 || escalation.after_secs >= expires_in_secs {
                return Err((
                    "escalate_after.after",
                    format!("must be from 1 second after the ask to before it expires ({expires_in_secs} s)"),
                ));
            }
            if escalation.to.is_empty() {
                return Err(("escalate_after.to", "names nobody".to_owned()));
            }
            if self.assignees.len() + escalation.to.len() > MAX_ASSIGNEES {
                return Err((
                    "escalate_after.to",
                    format!("at most {MAX_ASSIGNEES} assignees in all, with the escalation"),
                ));
            }
            for (index, address) in escalation.to.iter().enumerate() {
                let lowered = address.to_ascii_lowercase();
                let named_before = self
                    .assignees
                    .iter()
                    .chain(&escalation.to[..index])
                    .any(|earlier| earlier.to_ascii_lowercase() == lowered);
                if named_before {
                    return Err(("escalate_after.to", format!("`{address}` is already asked")));
                }
            }
        }
        Ok(())
    }

    /// People asked in ordered `stages`: the first stage's are asked at once, each next one
    /// once the one before is settled.
    #[must_use]
    pub fn in_stages(stages: Vec<Stage>) -> Self {
        let first = stages.first().cloned();
        Self {
            assignees: first
                .as_ref()
                .map(|stage| stage.assignees.clone())
                .unwrap_or_default(),
            required: first.map_or(1, |stage| stage.required),
            stages,
            ..Self::default()
        }
    }

    /// Checks each stage as [`People::check`] checks one list, and their number.
    ///
    /// # Errors
    /// The field at fault and a sentence.
    pub fn check_stages(&self) -> Result<(), (String, String)> {
        if self.stages.len() > MAX_STAGES {
            return Err((
                "approvals.stages".to_owned(),
                format!("at most {MAX_STAGES} stages"),
            ));
        }
        for (index, stage) in self.stages.iter().enumerate() {
            let field = format!("approvals.stages[{index}]");
            if stage.assignees.is_empty() {
                return Err((format!("{field}.assignees"), "names nobody".to_owned()));
            }
            let one = Self::assigned(stage.assignees.clone()).required(stage.required);
            one.check().map_err(|reason| (field.clone(), reason))?;
        }
        Ok(())
    }

    /// Whether the page has named assignees (one link each) rather than one anonymous link.
    #[must_use]
    pub fn is_assigned(&self) -> bool {
        !self.assignees.is_empty()
    }

    /// Checks the numbers: at least one assignee per approval required, no address twice.
    ///
    /// # Errors
    /// A sentence naming what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.assignees.len() > MAX_ASSIGNEES {
            return Err(format!("at most {MAX_ASSIGNEES} assignees"));
        }
        let available = u32::try_from(self.assignees.len().max(1)).unwrap_or(u32::MAX);
        if self.required == 0 || self.required > available {
            return Err(if self.is_assigned() {
                format!(
                    "approvals.required must be from 1 to the number of assignees ({available})"
                )
            } else {
                "approvals.required needs assignees: without them one answer settles the ask"
                    .to_owned()
            });
        }
        if self.sign_in_required && !self.is_assigned() {
            return Err(
                "sign_in: \"required\" needs assignees: the signed-in person must be one of them"
                    .to_owned(),
            );
        }
        for (index, address) in self.assignees.iter().enumerate() {
            let lowered = address.to_ascii_lowercase();
            if self.assignees[..index]
                .iter()
                .any(|earlier| earlier.to_ascii_lowercase() == lowered)
            {
                return Err(format!("`{address}` is named twice"));
            }
        }
        Ok(())
    }
}

/// E-mails each assignee their own link, when the server can send e-mail (`notifier_for`
/// refuses without SMTP, and then nobody is mailed). A failure never fails the caller's step:
/// whoever started it has the links, and can reissue them. The addresses the mail reached.
pub async fn email_assignees(notifier_for: &NotifierFor, links: &[AssigneeLink]) -> Vec<String> {
    let mut reached = Vec::new();
    for link in links {
        let recipient = AskRecipients {
            email: vec![link.assignee.clone()],
            ..AskRecipients::default()
        };
        match notifier_for(&recipient) {
            Ok(mail) => {
                let report = send_link(Some(&mail), "Your answer is requested", &link.link).await;
                if report.all_delivered() && !report.delivered().is_empty() {
                    reached.push(link.assignee.clone());
                }
            }
            Err(NotifyError::BadConfig { .. }) => {
                tracing::debug!("no SMTP server configured: the assignees' links are not e-mailed");
                return reached;
            }
            Err(error) => tracing::warn!(error = %error, "an assignee cannot be e-mailed"),
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_in_required_needs_assignees() {
        assert!(People::assigned(["ana@example.com"])
            .sign_in_required()
            .check()
            .is_ok());
        let alone = People::default().sign_in_required().check();
        assert!(alone.is_err_and(|reason| reason.starts_with("sign_in")));
    }

    fn tally(assignees: u32, required: u32, approvals: u32, declines: u32) -> Settled {
        Tally {
            assignees,
            required,
            approvals,
            declines,
        }
        .settles()
    }

    #[test]
    fn two_of_three_settle_on_the_second_approval_or_the_second_decline() {
        assert_eq!(tally(3, 2, 1, 0), Settled::Open);
        assert_eq!(tally(3, 2, 2, 0), Settled::Submitted);
        assert_eq!(
            tally(3, 2, 1, 1),
            Settled::Open,
            "the third can still approve"
        );
        assert_eq!(tally(3, 2, 0, 1), Settled::Open);
        assert_eq!(tally(3, 2, 0, 2), Settled::Declined);
        assert_eq!(tally(3, 2, 1, 2), Settled::Declined);
    }

    #[test]
    fn everyone_must_approve_so_one_decline_ends_it() {
        assert_eq!(tally(3, 3, 2, 0), Settled::Open);
        assert_eq!(tally(3, 3, 0, 1), Settled::Declined);
        assert_eq!(
            tally(3, 1, 0, 2),
            Settled::Open,
            "one of three: two may decline"
        );
        assert_eq!(tally(3, 1, 0, 3), Settled::Declined);
        assert_eq!(tally(1, 1, 0, 1), Settled::Declined);
    }

    #[test]
    fn the_numbers_are_checked_and_an_address_is_named_once() {
        assert!(People::assigned(["a@x.test", "b@x.test"])
            .required(2)
            .check()
            .is_ok());
        assert!(People::assigned(["a@x.test"]).required(2).check().is_err());
        assert!(People::assigned(["a@x.test"]).required(0).check().is_err());
        assert!(People::default().required(2).check().is_err());
        assert!(People::default().check().is_ok());
        let twice = People::assigned(["a@x.test", "A@X.test"]).check();
        assert_eq!(twice, Err("`A@X.test` is named twice".to_owned()));
    }

    #[test]
    fn an_answer_serializes_with_a_response_or_a_reason() -> anyhow::Result<()> {
        let approved = AnswerRecord {
            answered_by: Some("a@x.test".into()),
            at_ms: 0,
            outcome: Outcome::Submitted,
            response: Some(serde_json::json!({"ok": true})),
            reason: None,
        };
        assert_eq!(
            serde_json::to_value(&approved)?,
            serde_json::json!({"answered_by": "a@x.test", "at": "1970-01-01T00:00:00Z", "outcome": "submitted", "response": {"ok": true}})
        );
        let declined = AnswerRecord {
            outcome: Outcome::Declined,
            response: None,
            reason: Some("over budget".into()),
            ..approved
        };
        assert_eq!(serde_json::to_value(&declined)?["reason"], "over budget");
        assert!(serde_json::to_value(&declined)?.get("response").is_none());
        Ok(())
    }
}
