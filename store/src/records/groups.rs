//! One person asked on a page: who, and the group they answer for (`pages::groups`).

/// One person asked: who, and the group they are asked for, if any.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Member {
    /// Their e-mail address.
    pub email: String,
    /// The group they answer for.
    pub group: Option<String>,
}
