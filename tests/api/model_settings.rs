//! The model provider settings through the real binary: `tessera.toml` sets them, `--help`
//! lists them, and a bad one stops the start with one line naming the variable and the key.

use std::process::Command;

const BINARY: &str = env!("CARGO_BIN_EXE_tessera");

/// The provider variables that used to be read from the environment only.
const PROVIDER_SETTINGS: [(&str, &str); 10] = [
    ("OPENAI_API_KEY", "openai_api_key"),
    ("OPENAI_BASE_URL", "openai_base_url"),
    ("OPENAI_API_VERSION", "openai_api_version"),
    ("OLLAMA_BASE_URL", "ollama_base_url"),
    ("ANTHROPIC_API_KEY", "anthropic_api_key"),
    ("ANTHROPIC_BASE_URL", "anthropic_base_url"),
    ("GEMINI_API_KEY", "gemini_api_key"),
    ("GEMINI_BASE_URL", "gemini_base_url"),
    ("TESSERA_MODEL_TIMEOUT_SECS", "model_timeout_secs"),
    ("TESSERA_MODEL_MAX_RETRIES", "model_max_retries"),
];

/// The binary started in an empty folder holding `toml` as its `tessera.toml`, with none of
/// the model variables inherited from the environment running the tests.
fn run_with_file(toml: &str, arguments: &[&str]) -> anyhow::Result<std::process::Output> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("tessera.toml"), toml)?;
    let mut command = Command::new(BINARY);
    command
        .args(arguments)
        .current_dir(dir.path())
        .env_remove("TESSERA_CONFIG")
        .env_remove("TESSERA_MODEL");
    for (env, _) in PROVIDER_SETTINGS {
        command.env_remove(env);
    }
    Ok(command.output()?)
}

/// The one stderr line of a start refused (exit code 2) for the settings in `toml`.
fn refused(toml: &str) -> anyhow::Result<String> {
    let output = run_with_file(toml, &[])?;
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    Ok(stderr)
}

#[test]
fn help_lists_every_model_setting_with_its_file_key() -> anyhow::Result<()> {
    let output = run_with_file("", &["--help"])?;
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout)?;
    for (env, key) in PROVIDER_SETTINGS {
        assert!(help.contains(env), "{env} missing from --help");
        // A key is followed by its default or, without one, by the line's end: either way no
        // longer key that merely starts with it is mistaken for it.
        assert!(
            help.contains(&format!("file key: {key},"))
                || help.contains(&format!("file key: {key}\n")),
            "{key} missing from --help"
        );
    }
    Ok(())
}

#[test]
fn tessera_toml_sets_a_model_setting_and_a_bad_one_names_variable_and_key() -> anyhow::Result<()> {
    let stderr =
        refused("model = \"openai:qwen2.5\"\nopenai_base_url = \"ftp://models.example/v1\"\n")?;
    assert!(
        stderr.contains("invalid OPENAI_BASE_URL (tessera.toml `openai_base_url`)"),
        "{stderr}"
    );
    Ok(())
}

#[test]
fn a_key_set_in_tessera_toml_is_used_and_never_echoed() -> anyhow::Result<()> {
    // The model is checked before the notification settings: with the key in the file the
    // start gets as far as the (deliberately) bad SMTP port, without it the key is what stops it.
    let stderr = refused(
        "model = \"gemini:gemini-2.5-flash\"\ngemini_api_key = \"AIza-file-secret-value\"\n\
         smtp_port = \"lots\"\n",
    )?;
    assert!(
        stderr.contains("invalid TESSERA_SMTP_PORT (tessera.toml `smtp_port`)"),
        "{stderr}"
    );
    assert!(!stderr.contains("AIza-file-secret-value"), "{stderr}");
    let stderr = refused("model = \"gemini:gemini-2.5-flash\"\nsmtp_port = \"lots\"\n")?;
    assert!(
        stderr.contains("invalid GEMINI_API_KEY: missing"),
        "{stderr}"
    );
    Ok(())
}
