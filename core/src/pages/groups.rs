//! Operator-defined groups of people (`TESSERA_GROUPS`, DESIGN.md §15): an ask may name a group
//! where it names an assignee, and the group counts as one vote that any member can give.
//!
//! Written `name=address|address;name=address`, e.g.
//! `finance=ann@example.com|bob@example.com;legal=lee@example.com`. A name is letters, digits,
//! `-` and `_` (never an `@`, so an entry without one is a group's name). Each member gets a
//! `page_assignees` row of their own, with their own link, naming the group
//! (`assignee_group`): the first member's answer is the group's, and the other members' links
//! then show it. The store counts votes per group (`store::answers`).

use std::collections::BTreeMap;

pub use tessera_store::records::groups::Member;

/// The configured groups, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Groups(BTreeMap<String, Vec<String>>);

impl Groups {
    /// No groups.
    pub const NONE: Self = Self(BTreeMap::new());

    /// Parses `TESSERA_GROUPS`.
    ///
    /// # Errors
    /// A sentence naming what is wrong: a group without a name or members, a name with other
    /// characters, a member that is not an e-mail address, a group named twice.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut groups = BTreeMap::new();
        for entry in text
            .split(';')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
        {
            let (name, members) = entry
                .split_once('=')
                .ok_or_else(|| format!("`{entry}` is not name=address|address"))?;
            let name = name.trim();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(format!(
                    "`{name}` is not a group name (letters, digits, - and _)"
                ));
            }
            let members: Vec<String> = members
                .split('|')
                .map(str::trim)
                .filter(|member| !member.is_empty())
                .map(str::to_owned)
                .collect();
            if members.is_empty() {
                return Err(format!("group `{name}` has no members"));
            }
            if let Some(bad) = members
                .iter()
                .find(|member| member.parse::<lettre::Address>().is_err())
            {
                return Err(format!(
                    "`{bad}` in group `{name}` is not an e-mail address"
                ));
            }
            if groups.insert(name.to_owned(), members).is_some() {
                return Err(format!("group `{name}` is defined twice"));
            }
        }
        Ok(Self(groups))
    }

    /// Whether `entry` names a group (it has no `@`), known or not.
    #[must_use]
    pub fn is_group_name(entry: &str) -> bool {
        !entry.contains('@')
    }

    /// The members of group `name`, if it is one.
    #[must_use]
    pub fn members(&self, name: &str) -> Option<&[String]> {
        self.0.get(name).map(Vec::as_slice)
    }

    /// The people `entries` (addresses and group names) ask, in order: a group's members each
    /// with the group's name.
    ///
    /// # Errors
    /// The first entry that names no known group.
    pub fn expand<'a>(
        &self,
        entries: impl IntoIterator<Item = &'a String>,
    ) -> Result<Vec<Member>, String> {
        let mut people = Vec::new();
        for entry in entries {
            if Self::is_group_name(entry) {
                let members = self
                    .members(entry)
                    .ok_or_else(|| format!("`{entry}` is not a group (TESSERA_GROUPS)"))?;
                people.extend(members.iter().map(|email| Member {
                    email: email.clone(),
                    group: Some(entry.clone()),
                }));
            } else {
                people.push(Member {
                    email: entry.clone(),
                    group: None,
                });
            }
        }
        Ok(people)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_parse_and_expand_in_order() -> Result<(), String> {
        let groups = Groups::parse("finance=ann@x.test|bob@x.test; legal=lee@x.test")?;
        let asked = groups.expand(&["cy@x.test".to_owned(), "finance".to_owned()])?;
        let emails: Vec<_> = asked.iter().map(|member| member.email.as_str()).collect();
        assert_eq!(emails, ["cy@x.test", "ann@x.test", "bob@x.test"]);
        assert_eq!(asked[1].group.as_deref(), Some("finance"));
        assert!(groups.expand(&["sales".to_owned()]).is_err());
        Ok(())
    }

    #[test]
    fn bad_groups_are_refused() {
        assert!(Groups::parse("finance=").is_err());
        assert!(Groups::parse("fin ance=a@x.test").is_err());
        assert!(Groups::parse("finance=not-an-address").is_err());
        assert!(Groups::parse("a=a@x.test;a=b@x.test").is_err());
        assert_eq!(Groups::parse(""), Ok(Groups::default()));
    }
}
