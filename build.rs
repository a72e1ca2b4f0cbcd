//! Embeds the compiled site (everything cargo-leptos writes under `target/site`: CSS, the
//! islands' JavaScript and wasm, the favicon) into the server, so a release binary serves a
//! whole app from any folder. `cargo leptos build` writes the site before it builds the server;
//! a plain `cargo build`/`cargo test` without one embeds nothing and the server reads the
//! folder instead (`http::site`).

use std::{
    collections::hash_map::DefaultHasher,
    env,
    fmt::Write as _,
    fs,
    hash::{Hash as _, Hasher as _},
    path::{Path, PathBuf},
};

fn main() {
    let manifest =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let site = manifest.join("target").join("site");
    // A watched path that does not exist reruns this script, and rebuilds the crate, on every
    // build; an empty folder is cheap to watch, and cargo-leptos filling it is noticed.
    let _ = fs::create_dir_all(&site);
    println!("cargo:rerun-if-changed={}", site.display());
    let mut files = Vec::new();
    collect(&site, &mut files);
    files.sort();
    let mut code = String::from("&[\n");
    for absolute in files {
        let Ok(relative) = absolute.strip_prefix(&site) else {
            continue;
        };
        let (Some(relative), Some(absolute_text)) = (relative.to_str(), absolute.to_str()) else {
            continue;
        };
        let Ok(bytes) = fs::read(&absolute) else {
            continue;
        };
        let mut hasher = DefaultHasher::new();
        bytes.hash(&mut hasher);
        let etag = format!("\"{:016x}-{:x}\"", hasher.finish(), bytes.len());
        let _ = writeln!(
            code,
            "    EmbeddedFile {{ path: {:?}, bytes: include_bytes!({absolute_text:?}), etag: {etag:?} }},",
            relative.replace('\\', "/")
        );
    }
    code.push_str("]\n");
    fs::write(out.join("site_files.rs"), code).expect("OUT_DIR is writable");
}

fn collect(folder: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
