//! What every layer's settings are made of, below the layers that read them.
//!
//! Each layer declares its settings once, as a `clap::Args` struct: a field per setting whose
//! attributes name its environment variable (`env`), its `tessera.toml` key (`long`), its
//! default (`default_value`), how its value is parsed (`value_parser`, often one of [`parse`]'s)
//! and its help (the doc comment); `hide_env_values` marks a secret. From that one declaration
//! [`Sources::read`] reads the values — the environment winning over the file, the file over the
//! default, an empty value counting as unset — and names the setting in every error, and
//! [`settings_of`] lists them for `--help` and the file's key check. [`Secret`]s never reach a
//! log line.

pub mod parse;
mod secret;
mod sources;

pub use secret::Secret;
pub use sources::{settings_of, Invalid, Setting, Sources};
