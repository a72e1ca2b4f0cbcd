//! Previewing a page: a tree, an optional response schema and data, checked by `ValidateForm`.
//!
//! Used by `POST /api/pages/preview` and the author's preview page; it renders nothing itself
//! (the HTTP edge renders the returned tree), so the checks stay testable without HTML. A tree
//! whose nodes and resolved props would go over the render budget is refused before
//! `ValidateForm` resolves them (`RenderBudget::check_tree`).

use serde_json::Value;
use tessera_app::{
    catalog::Catalog,
    render::{OverBudget, RenderBudget},
    tree::PageTree,
};

use crate::forms::{validate_form::validate_form, validate_form::FormReport, FormSchema};

/// A preview request with its three inputs still as JSON.
#[derive(Clone, Debug, Default, serde::Deserialize, utoipa::ToSchema)]
pub struct PreviewInput {
    /// The page tree (DESIGN.md §4).
    #[schema(value_type = Object)]
    pub tree: Value,
    /// The response schema, if the page has a form.
    #[serde(default)]
    pub schema: Option<Value>,
    /// The data the tree binds to.
    #[serde(default)]
    pub data: Option<Value>,
}

impl PreviewInput {
    /// The three inputs as an author pasted them into the preview page's boxes (an empty box is
    /// no schema or no data).
    ///
    /// # Errors
    /// A sentence naming the box: no tree, or a box that is not JSON.
    pub fn from_pasted(tree: &str, schema: &str, data: &str) -> Result<Self, String> {
        let parse = |name: &str, text: &str| -> Result<Option<Value>, String> {
            if text.trim().is_empty() {
                return Ok(None);
            }
            serde_json::from_str(text)
                .map(Some)
                .map_err(|error| format!("{name}: not JSON ({error})"))
        };
        Ok(Self {
            tree: parse("tree", tree)?.ok_or_else(|| "tree: paste a page tree".to_owned())?,
            schema: parse("schema", schema)?,
            data: parse("data", data)?,
        })
    }
}

/// A checked preview, ready to render.
#[derive(Clone, Debug)]
pub struct Preview {
    /// The parsed tree.
    pub tree: PageTree,
    /// The data snapshot (`{}` when none was given).
    pub data: Value,
    /// The `ValidateForm` report.
    pub report: FormReport,
}

/// Why a preview could not be made at all.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// The tree is not a page tree.
    #[error("tree: {0}")]
    Tree(String),
    /// The schema is outside the form subset.
    #[error("schema: {0}")]
    Schema(String),
    /// The tree over its data would cost more to render than the render budget allows.
    #[error("tree: {0}")]
    OverBudget(#[from] OverBudget),
}

impl PreviewError {
    /// The input at fault (`tree` or `schema`).
    #[must_use]
    pub fn field(&self) -> &'static str {
        match self {
            Self::Tree(_) | Self::OverBudget(_) => "tree",
            Self::Schema(_) => "schema",
        }
    }
}

/// Parses the inputs, checks the tree against the default render budget and runs `ValidateForm`.
///
/// # Errors
/// [`PreviewError`] when the tree or the schema cannot be read at all, or the tree is over the
/// render budget.
pub fn preview(catalog: &Catalog, input: PreviewInput) -> Result<Preview, PreviewError> {
    let tree: PageTree = serde_json::from_value(input.tree)
        .map_err(|error| PreviewError::Tree(error.to_string()))?;
    let schema = match input.schema {
        None | Some(Value::Null) => None,
        Some(schema) => Some(
            FormSchema::from_json_schema(&schema)
                .map_err(|error| PreviewError::Schema(error.to_string()))?,
        ),
    };
    let data = input
        .data
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    RenderBudget::DEFAULT.check_tree(&tree, &data, catalog)?;
    let report = validate_form(&tree, catalog, schema.as_ref(), &data);
    Ok(Preview { tree, data, report })
}
