//! What every layer's settings are made of, below the layers that read them: one [`Setting`]
//! statement per setting (the single source of `--help`, the file key and the name an error
//! gives), the raw [`Sources`] they are read from, and [`Secret`]s that never reach a log line.
//! Each layer keeps its own table (`config::SETTINGS`, `llm::config::SETTINGS`, …) and reads it
//! with [`Sources::lookup`].

use std::{collections::BTreeMap, fmt};

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

/// One configurable setting: the single source for `--help`, the file keys and errors.
#[derive(Debug)]
pub struct Setting {
    /// The environment variable.
    pub env: &'static str,
    /// The key in `tessera.toml`.
    pub key: &'static str,
    /// The default, as shown in `--help`.
    pub default: &'static str,
    /// What it does.
    pub help: &'static str,
    /// Whether the value is a secret (never echoed).
    pub secret: bool,
}

/// Where raw values come from: the environment and the optional file, already read.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    /// Environment variables (only the ones in a settings table are looked at).
    pub env: BTreeMap<String, String>,
    /// Keys from `tessera.toml`.
    pub file: BTreeMap<String, String>,
}

impl Sources {
    /// The raw value of the setting of `table` named `env`, the environment winning over the
    /// file, with the name an error must give it: the variable, and the file key when the value
    /// came from the file. `None` when it is not set (or `env` is not in `table`).
    #[must_use]
    pub fn lookup(&self, table: &[Setting], env: &str) -> Option<(String, String)> {
        let setting = table.iter().find(|setting| setting.env == env)?;
        if let Some(value) = self.env.get(env) {
            return Some((env.to_owned(), value.clone()));
        }
        self.file.get(setting.key).map(|value| {
            (
                format!("{env} (tessera.toml `{}`)", setting.key),
                value.clone(),
            )
        })
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

    const TABLE: &[Setting] = &[Setting {
        env: "TESSERA_X",
        key: "x",
        default: "1",
        help: "A setting.",
        secret: false,
    }];

    #[test]
    fn the_environment_wins_and_a_file_value_is_named_with_its_key() {
        let mut sources = Sources::default();
        sources.file.insert("x".into(), "2".into());
        assert_eq!(
            sources.lookup(TABLE, "TESSERA_X"),
            Some(("TESSERA_X (tessera.toml `x`)".into(), "2".into()))
        );
        sources.env.insert("TESSERA_X".into(), "3".into());
        assert_eq!(
            sources.lookup(TABLE, "TESSERA_X"),
            Some(("TESSERA_X".into(), "3".into()))
        );
        assert_eq!(sources.lookup(TABLE, "TESSERA_Y"), None, "not in the table");
    }
}
