//! The binary serves a whole app from any folder: started from an empty folder with no
//! `TESSERA_SITE_ROOT`, its home page's stylesheet and the islands' JavaScript and wasm it links
//! come from the copy built into it, with their content types and an entity tag to revalidate.
//!
//! Needs a built site (`make test` builds it before the Rust tests and sets
//! `TESSERA_TEST_NEEDS_SITE`, so there a missing site fails the test); under a plain `cargo test`
//! without one there is nothing to embed and the test says it was skipped.

use std::path::Path;

use crate::process::{client, ServerProcess};

#[tokio::test]
async fn started_from_an_empty_folder_the_binary_serves_its_css_js_and_wasm() -> anyhow::Result<()>
{
    let site = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/site/pkg/tessera.css");
    if !site.exists() {
        // `make test` builds the site first and says so; a plain `cargo test` may not have one.
        anyhow::ensure!(
            std::env::var_os("TESSERA_TEST_NEEDS_SITE").is_none(),
            "no built site in target/site, though TESSERA_TEST_NEEDS_SITE says there is one"
        );
        eprintln!("skipped: no built site in target/site (run `cargo leptos build` first)");
        return Ok(());
    }
    let folder = tempfile::tempdir()?;
    let database = format!("sqlite://{}", folder.path().join("assets.db").display());
    let server = ServerProcess::start(folder.path(), &database, &[]).await?;
    let client = client()?;
    let home = client.get(server.url("/")).send().await?.text().await?;
    let mut linked: Vec<&str> = home
        .split('"')
        .filter(|part| part.starts_with("/pkg/"))
        .collect();
    linked.sort_unstable();
    linked.dedup();
    for (extension, content_type) in [
        (".css", "text/css"),
        (".js", "text/javascript"),
        (".wasm", "application/wasm"),
    ] {
        let path = linked
            .iter()
            .find(|path| path.ends_with(extension))
            .ok_or_else(|| {
                anyhow::anyhow!("the home page links no {extension} file: {linked:?}")
            })?;
        let response = client.get(server.url(path)).send().await?;
        assert_eq!(response.status(), 200, "{path}");
        let headers = response.headers().clone();
        assert_eq!(headers["content-type"], content_type, "{path}");
        assert!(!response.bytes().await?.is_empty(), "{path} is empty");
        let etag = headers
            .get("etag")
            .ok_or_else(|| anyhow::anyhow!("{path} has no ETag"))?;
        let again = client
            .get(server.url(path))
            .header("if-none-match", etag)
            .send()
            .await?;
        assert_eq!(again.status(), 304, "{path} revalidated");
    }
    let favicon = client.get(server.url("/favicon.svg")).send().await?;
    assert_eq!(favicon.status(), 200);
    assert_eq!(favicon.headers()["content-type"], "image/svg+xml");
    assert_eq!(
        client
            .get(server.url("/pkg/missing.js"))
            .send()
            .await?
            .status(),
        404
    );
    server.stop().await
}
