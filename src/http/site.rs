//! The compiled browser assets (`/pkg/*`: CSS, the islands' JavaScript and wasm; `/favicon.svg`).
//!
//! Served from the folder `TESSERA_SITE_ROOT` names when it is set (a developer serving a fresh
//! build), else from the copy `build.rs` embedded in the binary (a release binary runs from any
//! folder), else from `target/site`: a build without a site, or one whose copy is incomplete —
//! a plain `cargo leptos build` compiles the server while it still writes the front end, which
//! is why `make build`/`make release` build the front end first. Names carry no content hash, so
//! embedded files are sent with an `ETag` and `Cache-Control: no-cache`: a browser revalidates
//! and gets `304 Not Modified` until the binary changes.

use axum::{
    extract::Path,
    response::{IntoResponse as _, Response},
    routing::get,
    Router,
};
use http::{header, HeaderMap, HeaderValue, StatusCode};
use tower_http::services::{ServeDir, ServeFile};

/// One file of the site, embedded at build time.
#[derive(Debug)]
pub struct EmbeddedFile {
    /// Its path under the site root, e.g. `pkg/tessera.css`.
    pub path: &'static str,
    /// Its bytes.
    pub bytes: &'static [u8],
    /// A quoted entity tag from its content.
    pub etag: &'static str,
}

/// The site as it was when the server was built; empty when no site was built.
pub static EMBEDDED: &[EmbeddedFile] = include!(concat!(env!("OUT_DIR"), "/site_files.rs"));

/// Where the assets come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SiteFiles {
    /// A folder holding `pkg/` and `favicon.svg`.
    Folder(String),
    /// The copy built into the binary.
    Embedded,
}

impl SiteFiles {
    /// The folder `site_root` names, else the embedded copy when it is whole, else
    /// `target/site`.
    #[must_use]
    pub fn choose(site_root: Option<&str>) -> Self {
        match site_root {
            Some(folder) => Self::Folder(folder.to_owned()),
            None if is_whole(EMBEDDED) => Self::Embedded,
            None => {
                if !EMBEDDED.is_empty() {
                    tracing::warn!(
                        site.root = DEFAULT_SITE_ROOT,
                        "the site built into this binary lacks its stylesheet, JavaScript or wasm (build with `make build`); serving the folder"
                    );
                }
                Self::Folder(DEFAULT_SITE_ROOT.to_owned())
            }
        }
    }
}

impl SiteFiles {
    /// The site's stylesheet `pkg/{output_name}.css`, for a document that must carry it inline
    /// (an MCP App's view, which may fetch nothing); `None` when the site has none.
    #[must_use]
    pub fn stylesheet(&self, output_name: &str) -> Option<String> {
        let path = format!("pkg/{output_name}.css");
        match self {
            Self::Folder(root) => std::fs::read_to_string(format!("{root}/{path}")).ok(),
            Self::Embedded => EMBEDDED
                .iter()
                .find(|file| file.path == path)
                .and_then(|file| String::from_utf8(file.bytes.to_vec()).ok()),
        }
    }
}

/// Whether `files` hold what a page links: a stylesheet, the islands' JavaScript and wasm.
fn is_whole(files: &[EmbeddedFile]) -> bool {
    [".css", ".js", ".wasm"].iter().all(|extension| {
        files
            .iter()
            .any(|file| file.path.starts_with("pkg/") && file.path.ends_with(extension))
    })
}

/// Where cargo-leptos writes the site, relative to the checkout.
pub const DEFAULT_SITE_ROOT: &str = "target/site";

/// The asset routes.
pub fn routes<S: Clone + Send + Sync + 'static>(files: &SiteFiles) -> Router<S> {
    match files {
        SiteFiles::Folder(root) => Router::new()
            .nest_service("/pkg", ServeDir::new(format!("{root}/pkg")))
            .route_service(
                "/favicon.svg",
                ServeFile::new(format!("{root}/favicon.svg")),
            ),
        SiteFiles::Embedded => Router::new()
            .route(
                "/pkg/{*file}",
                get(|Path(file): Path<String>, headers: HeaderMap| async move {
                    embedded(&format!("pkg/{file}"), &headers)
                }),
            )
            .route(
                "/favicon.svg",
                get(|headers: HeaderMap| async move { embedded("favicon.svg", &headers) }),
            ),
    }
}

fn embedded(path: &str, headers: &HeaderMap) -> Response {
    let Some(file) = EMBEDDED.iter().find(|file| file.path == path) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let etag = HeaderValue::from_static(file.etag);
    let cache = (header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|tags| {
            tags.split(',')
                .any(|tag| tag.trim() == file.etag || tag.trim() == "*")
        });
    if unchanged {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag), cache]).into_response();
    }
    let content_type = mime_guess::from_path(file.path).first_or_octet_stream();
    let content_type = HeaderValue::from_str(content_type.as_ref())
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::ETAG, etag),
            cache,
        ],
        file.bytes,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::{is_whole, EmbeddedFile};

    fn file(path: &'static str) -> EmbeddedFile {
        EmbeddedFile {
            path,
            bytes: b"x",
            etag: "\"1\"",
        }
    }

    #[test]
    fn a_copy_without_its_wasm_is_not_served() {
        let whole = [file("pkg/t.css"), file("pkg/t.js"), file("pkg/t.wasm")];
        assert!(is_whole(&whole));
        assert!(!is_whole(&whole[..2]));
        assert!(!is_whole(&[]));
    }
}
