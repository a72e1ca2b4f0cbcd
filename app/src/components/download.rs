//! `DownloadLink`: bound data offered as a CSV or JSON file, built on the server.
//!
//! The link points at `{download_base}/{node}.{csv|json}`; the route behind it loads the page,
//! resolves the node's props against the stored data and answers with [`download_body`]. The CSV
//! is RFC 4180 (CRLF lines, quotes doubled) and guards against spreadsheet formula injection: a
//! text cell starting with `=`, `+`, `-`, `@`, tab or carriage return gets a leading `'`.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::binding::value_text;
use crate::catalog::{ComponentProps, Role};
use crate::render::NodeCtx;

/// The file format of a download.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DownloadFormat {
    // Comma-separated values, for spreadsheets.
    #[default]
    Csv,
    // JSON, for programs.
    Json,
}

impl DownloadFormat {
    /// The file extension and URL suffix.
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::Json => "json",
        }
    }

    /// The format for a URL suffix (`csv` or `json`).
    #[must_use]
    pub fn from_extension(extension: &str) -> Option<Self> {
        match extension {
            "csv" => Some(Self::Csv),
            "json" => Some(Self::Json),
            _ => None,
        }
    }

    /// The response's `Content-Type`.
    #[must_use]
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Csv => "text/csv; charset=utf-8",
            Self::Json => "application/json",
        }
    }
}

/// Props of the `DownloadLink` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DownloadLinkProps {
    /// The link text, such as "Download the 3 emails as CSV".
    pub label: String,
    /// csv (default; for spreadsheets) or json.
    #[serde(default)]
    pub format: DownloadFormat,
    /// The data to offer, bound with {"$data": "/pointer"}: an array of objects becomes one CSV
    /// row per object.
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub data: Option<Value>,
    /// For CSV: the object keys to include, in column order (default: every key, in order of first
    /// appearance).
    #[serde(default)]
    pub columns: Option<Vec<String>>,
    /// The suggested file name without extension (default "data").
    #[serde(default)]
    pub filename: Option<String>,
}

impl ComponentProps for DownloadLinkProps {
    const NAME: &'static str = "DownloadLink";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str = "Offers data as a CSV or JSON file.";
    const BY_REFERENCE: &'static [&'static str] = &["data"];

    fn example() -> (Value, Value) {
        (
            json!({"label": "Download the list as CSV", "format": "csv", "data": {"$data": "/emails"},
                   "columns": ["from", "subject", "date"], "filename": "emails"}),
            json!({"emails": [
                {"from": "news@example.com", "subject": "Weekly news", "date": "2023-01-04"},
                {"from": "billing@example.com", "subject": "Invoice, January", "date": "2023-02-01"}
            ]}),
        )
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let href = node.ctx.download_base.as_ref().map(|base| {
            format!(
                "{}/{}.{}",
                base.trim_end_matches('/'),
                super::encode_query_component(node.id),
                self.format.extension()
            )
        });
        // The link only says how many rows the file holds; bound rows are counted where they are.
        let count = match (node.bound("data"), &self.data) {
            (Some(rows), _) => Some(rows.len()),
            (None, Some(Value::Array(rows))) => Some(rows.len()),
            (None, Some(Value::Null) | None) => Some(0),
            (None, Some(_)) => None,
        };
        view! { <DownloadLinkView props=self href count/> }.into_any()
    }
}

/// An `<a download>` to the page-scoped file URL, or a note when downloads are unavailable.
/// `count` is the number of rows the file holds, `None` when the data is not a list.
#[component]
pub fn DownloadLinkView(
    props: DownloadLinkProps,
    href: Option<String>,
    count: Option<usize>,
) -> impl IntoView {
    let extension = props.format.extension();
    let detail = match count {
        Some(1) => format!("{}, 1 row", extension.to_uppercase()),
        Some(rows) => format!("{}, {rows} rows", extension.to_uppercase()),
        None => extension.to_uppercase(),
    };
    let filename = format!(
        "{}.{extension}",
        props
            .filename
            .as_deref()
            .map(|name| name.replace(['/', '\\'], "_"))
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| "data".to_owned())
    );
    match href {
        Some(href) => view! {
            <p>
                <a
                    href=href
                    download=filename
                    class="inline-flex items-center gap-2 rounded-md border border-indigo-300 bg-indigo-50 px-3 py-2 font-medium text-indigo-800 hover:bg-indigo-100 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:border-indigo-700 dark:bg-indigo-950 dark:text-indigo-200"
                >
                    <span aria-hidden="true">"\u{2193}"</span>
                    {props.label}
                    <span class="text-sm font-normal text-indigo-800 dark:text-indigo-200">{format!("({detail})")}</span>
                </a>
            </p>
        }
        .into_any(),
        None => view! {
            <p class="text-sm text-slate-600 dark:text-slate-300">{format!("{} (download not available here)", props.label)}</p>
        }
        .into_any(),
    }
}

/// A file served for a page's `DownloadLink`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DownloadFile {
    /// The response's `Content-Type`.
    pub content_type: &'static str,
    /// The suggested file name, for `Content-Disposition`.
    pub filename: String,
    /// The file's contents.
    pub body: String,
}

/// The file behind `{download_base}/{file}` for a stored page: `file` is `<node id>.<csv|json>`,
/// the node must be a `DownloadLink` of that format. `None` for anything else (answer 404).
#[must_use]
pub fn download_for_node(
    tree: &crate::tree::PageTree,
    data: &Value,
    file: &str,
) -> Option<DownloadFile> {
    let (node_id, extension) = file.rsplit_once('.')?;
    let format = DownloadFormat::from_extension(extension)?;
    let node = tree
        .nodes
        .get(node_id)
        .filter(|node| node.component == DownloadLinkProps::NAME)?;
    let resolved = crate::binding::resolve_props(&node.props, data);
    let props = crate::catalog::parse_props::<DownloadLinkProps>(&resolved).ok()?;
    if props.format != format {
        return None;
    }
    let (content_type, body) = download_body(&resolved, format);
    let stem: String = props
        .filename
        .unwrap_or_default()
        .chars()
        .filter(|character| {
            character.is_ascii_alphanumeric() || matches!(character, '-' | '_' | '.' | ' ')
        })
        .collect();
    let stem = if stem.trim().is_empty() {
        "data".to_owned()
    } else {
        stem.trim().to_owned()
    };
    Some(DownloadFile {
        content_type,
        filename: format!("{stem}.{extension}"),
        body,
    })
}

/// Builds the file a `DownloadLink` offers from its resolved props: `(content type, body)`.
///
/// Reads `data` (and, for CSV, `columns`) from the props; anything missing gives an empty file.
#[must_use]
pub fn download_body(props_resolved: &Value, format: DownloadFormat) -> (&'static str, String) {
    let data = props_resolved.get("data").unwrap_or(&Value::Null);
    let body = match format {
        DownloadFormat::Json => {
            serde_json::to_string_pretty(data).unwrap_or_else(|_| "null".to_owned())
        }
        DownloadFormat::Csv => {
            let columns: Option<Vec<String>> = props_resolved
                .get("columns")
                .and_then(Value::as_array)
                .map(|columns| {
                    columns
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                });
            to_csv(data, columns)
        }
    };
    (format.content_type(), body)
}

fn to_csv(data: &Value, columns: Option<Vec<String>>) -> String {
    let rows: Vec<&Value> = match data {
        Value::Array(rows) => rows.iter().collect(),
        Value::Null => Vec::new(),
        other => vec![other],
    };
    let has_objects = rows.iter().any(|row| row.is_object());
    let mut lines: Vec<String> = Vec::with_capacity(rows.len() + 1);
    if has_objects {
        let columns = columns.unwrap_or_else(|| {
            let mut seen: Vec<String> = Vec::new();
            for row in &rows {
                if let Value::Object(object) = row {
                    for key in object.keys() {
                        if !seen.contains(key) {
                            seen.push(key.clone());
                        }
                    }
                }
            }
            seen
        });
        lines.push(csv_line(
            columns
                .iter()
                .map(|column| csv_cell(&Value::String(column.clone()))),
        ));
        for row in rows {
            let line = match row {
                Value::Object(object) => csv_line(
                    columns
                        .iter()
                        .map(|column| csv_cell(object.get(column).unwrap_or(&Value::Null))),
                ),
                other => csv_line(std::iter::once(csv_cell(other))),
            };
            lines.push(line);
        }
    } else {
        for row in rows {
            let line = match row {
                Value::Array(cells) => csv_line(cells.iter().map(csv_cell)),
                other => csv_line(std::iter::once(csv_cell(other))),
            };
            lines.push(line);
        }
    }
    let mut csv = lines.join("\r\n");
    if !csv.is_empty() {
        csv.push_str("\r\n");
    }
    csv
}

fn csv_line(cells: impl Iterator<Item = String>) -> String {
    cells.collect::<Vec<_>>().join(",")
}

/// One escaped CSV cell: text cells that a spreadsheet would read as a formula get a leading `'`,
/// then cells with commas, quotes or line breaks are quoted with quotes doubled.
fn csv_cell(value: &Value) -> String {
    let mut text = value_text(value);
    if value.is_string() && text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        text.insert(0, '\'');
    }
    if text.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_a_header_from_the_keys_and_crlf_lines() {
        let props = json!({"data": [{"a": 1, "b": "x"}, {"a": 2, "c": true}]});
        let (content_type, body) = download_body(&props, DownloadFormat::Csv);
        assert_eq!(content_type, "text/csv; charset=utf-8");
        assert_eq!(body, "a,b,c\r\n1,x,\r\n2,,true\r\n");
    }

    #[test]
    fn csv_follows_the_given_columns() {
        let props = json!({"data": [{"a": 1, "b": "x"}], "columns": ["b", "missing"]});
        assert_eq!(
            download_body(&props, DownloadFormat::Csv).1,
            "b,missing\r\nx,\r\n"
        );
    }

    #[test]
    fn csv_quotes_commas_quotes_and_line_breaks() {
        let props = json!({"data": [{"t": "a,b"}, {"t": "say \"hi\""}, {"t": "two\nlines"}]});
        assert_eq!(
            download_body(&props, DownloadFormat::Csv).1,
            "t\r\n\"a,b\"\r\n\"say \"\"hi\"\"\"\r\n\"two\nlines\"\r\n"
        );
    }

    #[test]
    fn csv_defuses_spreadsheet_formulas_in_text_cells() {
        let props = json!({"data": [["=SUM(A1:A2)", "+1", "-2", "@cmd", -3, "ok"]]});
        assert_eq!(
            download_body(&props, DownloadFormat::Csv).1,
            "'=SUM(A1:A2),'+1,'-2,'@cmd,-3,ok\r\n"
        );
        let quoted = json!({"data": [["=HYPERLINK(\"x\",\"y\")"]]});
        assert_eq!(
            download_body(&quoted, DownloadFormat::Csv).1,
            "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"\r\n"
        );
    }

    #[test]
    fn json_is_the_bound_data_pretty_printed() {
        let props = json!({"data": [{"a": 1}]});
        let (content_type, body) = download_body(&props, DownloadFormat::Json);
        assert_eq!(content_type, "application/json");
        assert_eq!(
            serde_json::from_str::<Value>(&body).ok(),
            Some(json!([{"a": 1}]))
        );
    }

    #[test]
    fn missing_data_gives_an_empty_file() {
        assert_eq!(download_body(&json!({}), DownloadFormat::Csv).1, "");
        assert_eq!(download_body(&json!({}), DownloadFormat::Json).1, "null");
    }

    #[test]
    fn a_page_serves_the_file_of_its_download_link_only() -> Result<(), serde_json::Error> {
        let tree: crate::tree::PageTree = serde_json::from_value(json!({"nodes": {
            "d": {"component": "DownloadLink", "props": {"label": "Get", "data": {"$data": "/rows"}, "filename": "my \"report\"/x"}},
            "t": {"component": "Text", "props": {"text": "x"}}
        }}))?;
        let data = json!({"rows": [{"a": 1}]});
        let file = download_for_node(&tree, &data, "d.csv");
        assert_eq!(
            file,
            Some(DownloadFile {
                content_type: "text/csv; charset=utf-8",
                filename: "my reportx.csv".to_owned(),
                body: "a\r\n1\r\n".to_owned()
            })
        );
        assert_eq!(download_for_node(&tree, &data, "d.json"), None);
        assert_eq!(download_for_node(&tree, &data, "t.csv"), None);
        assert_eq!(download_for_node(&tree, &data, "missing.csv"), None);
        assert_eq!(download_for_node(&tree, &data, "d"), None);
        Ok(())
    }

    #[test]
    fn extensions_round_trip() {
        for format in [DownloadFormat::Csv, DownloadFormat::Json] {
            assert_eq!(
                DownloadFormat::from_extension(format.extension()),
                Some(format)
            );
        }
        assert_eq!(DownloadFormat::from_extension("exe"), None);
    }
}
