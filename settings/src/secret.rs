//! [`Secret`]: a setting's value that must never be printed.

use std::fmt;

use secrecy::{ExposeSecret as _, SecretString};

/// A value that must never reach a log line, `--help` or a `Debug` print: a [`SecretString`]
/// (zeroed when dropped), with the equality configuration tests compare by.
#[derive(Clone)]
pub struct Secret(SecretString);

impl Secret {
    /// Wraps a secret value.
    #[must_use]
    pub fn new(value: impl Into<String>) -> Self {
        Self(SecretString::from(value.into()))
    }

    /// The secret itself; call only where it is used, never to log it.
    #[must_use]
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.expose() == other.expose()
    }
}

impl Eq for Secret {}

impl fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Secret(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_prints_and_compares_by_value() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), "Secret(***)");
        assert_eq!(secret.expose(), "hunter2");
        assert_eq!(secret, Secret::new("hunter2"));
        assert_ne!(secret, Secret::new("hunter3"));
    }
}
