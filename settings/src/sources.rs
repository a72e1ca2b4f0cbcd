//! [`Sources`]: the raw values (environment and `tessera.toml`) and the one reader that turns
//! them into a layer's declared settings; [`settings_of`]: those declarations, for `--help`.

use std::collections::BTreeMap;

use clap::{
    error::{ContextKind, ContextValue},
    Args, Command, FromArgMatches,
};

/// Where raw values come from: the environment and the optional file, already read.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    /// Environment variables (only the ones a layer declares are looked at).
    pub env: BTreeMap<String, String>,
    /// Keys from `tessera.toml`.
    pub file: BTreeMap<String, String>,
}

/// A value a setting refused, naming the setting: its variable, and its file key when the value
/// came from the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {setting}: {reason}")]
pub struct Invalid {
    /// The environment variable (and file key) at fault.
    pub setting: String,
    /// Why it was refused; never a secret's value.
    pub reason: String,
}

/// One setting as its declaration states it: what `--help` lists and the file's keys are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The environment variable.
    pub env: String,
    /// The key in `tessera.toml`.
    pub key: String,
    /// The default, when it has one (a setting without one is unset until set).
    pub default: Option<String>,
    /// What it does.
    pub help: String,
    /// Whether the value is a secret (never echoed).
    pub secret: bool,
}

fn declared<T: Args>() -> Command {
    T::augment_args(Command::new("tessera").no_binary_name(true))
}

/// The settings `T` declares, in its order.
#[must_use]
pub fn settings_of<T: Args>() -> Vec<Setting> {
    declared::<T>()
        .get_arguments()
        .filter_map(|arg| {
            Some(Setting {
                env: arg.get_env()?.to_str()?.to_owned(),
                key: arg.get_long()?.to_owned(),
                default: arg
                    .get_default_values()
                    .first()
                    .and_then(|value| value.to_str())
                    .map(str::to_owned),
                help: arg.get_help().map(ToString::to_string).unwrap_or_default(),
                secret: arg.is_hide_env_values_set(),
            })
        })
        .collect()
}

impl Sources {
    /// Sources holding `env` as the environment and `file` as the file's keys (tests, embedders).
    #[must_use]
    pub fn from_pairs(env: &[(&str, &str)], file: &[(&str, &str)]) -> Self {
        let map = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect()
        };
        Self {
            env: map(env),
            file: map(file),
        }
    }

    /// An environment of `T`'s settings as `lookup` answers their variables, and no file: how
    /// tests and embedders hand a layer its settings without the process environment.
    #[must_use]
    pub fn from_lookup<T: Args>(lookup: &impl Fn(&str) -> Option<String>) -> Self {
        let env = settings_of::<T>()
            .into_iter()
            .filter_map(|setting| Some((setting.env.clone(), lookup(&setting.env)?)))
            .collect();
        Self {
            env,
            file: BTreeMap::new(),
        }
    }

    /// The raw value of the setting with variable `env` and file key `key`, the environment
    /// winning over the file, with the name an error must give it. An empty value is unset.
    #[must_use]
    pub fn value(&self, env: &str, key: &str) -> Option<(String, String)> {
        let set = |value: &&String| !value.trim().is_empty();
        if let Some(value) = self.env.get(env).filter(set) {
            return Some((env.to_owned(), value.clone()));
        }
        self.file
            .get(key)
            .filter(set)
            .map(|value| (format!("{env} (tessera.toml `{key}`)"), value.clone()))
    }

    /// The name an error about `T`'s setting `env` gives: the variable, with its file key when
    /// its value came from the file.
    #[must_use]
    pub fn name_of<T: Args>(&self, env: &str) -> String {
        settings_of::<T>()
            .into_iter()
            .find(|setting| setting.env == env)
            .and_then(|setting| self.value(&setting.env, &setting.key))
            .map_or_else(|| env.to_owned(), |(name, _)| name)
    }

    /// The settings `T` declares, each from the environment, else the file, else its default,
    /// parsed by its declaration.
    ///
    /// # Errors
    /// The first value a setting refuses, naming the setting.
    pub fn read<T: Args + FromArgMatches>(&self) -> Result<T, Invalid> {
        let mut argv = Vec::new();
        let mut names = BTreeMap::new();
        for setting in settings_of::<T>() {
            if let Some((name, value)) = self.value(&setting.env, &setting.key) {
                argv.push(format!("--{}={value}", setting.key));
                names.insert(setting.key, name);
            }
        }
        // Values come from `self` only: were clap to read the process environment too, a
        // test's settings would mix with the machine's.
        let command = declared::<T>().mut_args(|arg| arg.env(None::<&'static str>));
        let matches = command
            .try_get_matches_from(argv)
            .map_err(|error| refused(&error, &names))?;
        T::from_arg_matches(&matches).map_err(|error| refused(&error, &names))
    }
}

/// The setting a clap error is about, by the name its value came under, and the parser's reason.
fn refused(error: &clap::Error, names: &BTreeMap<String, String>) -> Invalid {
    let key = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg
            .trim_start_matches('-')
            .split([' ', '='])
            .next()
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    };
    let reason = std::error::Error::source(error)
        .map_or_else(|| error.kind().to_string(), ToString::to_string);
    Invalid {
        setting: names.get(&key).cloned().unwrap_or(key),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, Secret};

    /// Two settings as a layer declares them.
    #[derive(Args, Debug)]
    struct Declared {
        /// Seconds something lasts
        #[arg(long = "lifetime_secs", env = "TESSERA_X_SECS", default_value = "30",
              value_parser = parse::whole(1..=60, "seconds"))]
        lifetime_secs: u64,
        /// A token
        #[arg(long = "x_token", env = "TESSERA_X_TOKEN", hide_env_values = true,
              value_parser = parse::secret(16))]
        token: Option<Secret>,
    }

    #[test]
    fn defaults_apply_the_file_fills_in_and_the_environment_wins() -> Result<(), Invalid> {
        let defaults: Declared = Sources::default().read()?;
        assert_eq!((defaults.lifetime_secs, defaults.token), (30, None));
        let from_file: Declared = Sources::from_pairs(&[], &[("lifetime_secs", "45")]).read()?;
        assert_eq!(from_file.lifetime_secs, 45);
        let both: Declared =
            Sources::from_pairs(&[("TESSERA_X_SECS", "50")], &[("lifetime_secs", "45")]).read()?;
        assert_eq!(both.lifetime_secs, 50);
        let blank: Declared = Sources::from_pairs(&[("TESSERA_X_SECS", " ")], &[]).read()?;
        assert_eq!(blank.lifetime_secs, 30, "an empty value is unset");
        Ok(())
    }

    #[test]
    fn a_refused_value_names_the_variable_and_the_file_key_it_came_from() {
        let from_env = Sources::from_pairs(&[("TESSERA_X_SECS", "90")], &[]).read::<Declared>();
        assert_eq!(
            from_env.err(),
            Some(Invalid {
                setting: "TESSERA_X_SECS".into(),
                reason: "`90` must be a whole number of seconds from 1 to 60".into(),
            })
        );
        let from_file = Sources::from_pairs(&[], &[("x_token", "hunter2")]).read::<Declared>();
        let error = from_file.err().map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "invalid TESSERA_X_TOKEN (tessera.toml `x_token`): must be at least 16 characters"
            )
        );
    }

    #[test]
    fn the_declaration_lists_variable_key_default_help_and_secrecy() {
        let listed = settings_of::<Declared>();
        assert_eq!(
            listed,
            vec![
                Setting {
                    env: "TESSERA_X_SECS".into(),
                    key: "lifetime_secs".into(),
                    default: Some("30".into()),
                    help: "Seconds something lasts".into(),
                    secret: false,
                },
                Setting {
                    env: "TESSERA_X_TOKEN".into(),
                    key: "x_token".into(),
                    default: None,
                    help: "A token".into(),
                    secret: true,
                },
            ]
        );
    }
}
