//! The page fixtures `tessera-llm`'s provider tests read (`llm/tests/data/page/`): the response
//! format, every default tool and the system prompt, exactly as the agent sends them. The model
//! crate cannot depend on the agent, so its tests read these files; this test keeps them true.
//! After a change to the page schema, a component or the prompt, rewrite them with
//! `TESSERA_BLESS=1 cargo test -p tessera-core --lib provider_fixtures`.

use std::path::PathBuf;

use tessera_app::catalog::Catalog;

use super::{page_schema::example_response_format, prompt::system_prompt, tools::tool_definitions};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../llm/tests/data/page")
        .join(name)
}

/// Compares `fixture`'s text with `expected`, or writes it when blessing.
fn check(name: &str, expected: &str) -> anyhow::Result<()> {
    let path = fixture(name);
    if std::env::var("TESSERA_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, expected)?;
        return Ok(());
    }
    let stored = std::fs::read_to_string(&path)?;
    anyhow::ensure!(
        stored == expected,
        "{} is not what the agent sends; rewrite it with TESSERA_BLESS=1 cargo test -p tessera-core --lib provider_fixtures",
        path.display()
    );
    Ok(())
}

#[test]
fn the_model_crates_page_fixtures_are_what_the_agent_sends() -> anyhow::Result<()> {
    check(
        "response_format.json",
        &(serde_json::to_string_pretty(&example_response_format())? + "\n"),
    )?;
    check(
        "default_tools.json",
        &(serde_json::to_string_pretty(&tool_definitions(&Catalog::defaults()))? + "\n"),
    )?;
    check("system_prompt.txt", &system_prompt(true)?)
}
