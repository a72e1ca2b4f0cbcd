//! One operation: its HTTP binding, its compiled parameter schema and what code reads from a call
//! (the item ids it touches, the tool definition the model sees).

use std::{collections::BTreeSet, fmt, sync::Arc};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::ToolDefinition;

use super::{
    tag::{Tag, ToolMode},
    Manifest,
};

/// An HTTP method an operation may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    /// GET: arguments go in the query string.
    Get,
    /// DELETE: arguments go in the query string.
    Delete,
    /// POST: arguments go in a JSON body.
    Post,
    /// PUT: arguments go in a JSON body.
    Put,
    /// PATCH: arguments go in a JSON body.
    Patch,
}

impl HttpMethod {
    /// Whether the non-path arguments travel in the query string rather than a JSON body.
    #[must_use]
    pub fn uses_query(self) -> bool {
        matches!(self, Self::Get | Self::Delete)
    }

    /// The method as `http` knows it.
    #[must_use]
    pub fn as_http(self) -> http::Method {
        match self {
            Self::Get => http::Method::GET,
            Self::Delete => http::Method::DELETE,
            Self::Post => http::Method::POST,
            Self::Put => http::Method::PUT,
            Self::Patch => http::Method::PATCH,
        }
    }
}

/// Where an operation is reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpBinding {
    /// The method.
    pub method: HttpMethod,
    /// The path template under the base URL, e.g. `/items/{id}`.
    pub path: String,
    /// A base URL for this operation only; the manifest's otherwise.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Arguments sent in the query string whatever the method (an OpenAPI `in: query`
    /// parameter of a POST, say); on GET and DELETE every non-path argument already is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query: Vec<String>,
    /// The argument whose value is the whole JSON body (an OpenAPI request body that is not a
    /// flat object); the other non-path arguments then go in the query string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

impl HttpBinding {
    /// The `{placeholder}` names in the path template, in order.
    #[must_use]
    pub fn placeholders(&self) -> Vec<String> {
        let mut names = Vec::new();
        let mut rest = self.path.as_str();
        while let Some(start) = rest.find('{') {
            let Some(end) = rest[start..].find('}') else {
                break;
            };
            names.push(rest[start + 1..start + end].to_owned());
            rest = &rest[start + end + 1..];
        }
        names
    }
}

/// An auth header whose value comes from an environment variable at start-up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthHeader {
    /// The header, e.g. `Authorization`.
    pub header: String,
    /// The environment variable holding the secret.
    pub env: String,
    /// Text put before the secret, e.g. `Bearer `.
    #[serde(default)]
    pub prefix: String,
}

/// One operation of a site, checked.
#[derive(Clone)]
pub struct Operation {
    /// The tool name, `[a-zA-Z0-9_-]{1,64}`.
    pub name: String,
    /// What it does, for the model and the tools panel.
    pub description: String,
    /// The entity it acts on, e.g. `items`.
    pub entity: String,
    /// Its tags.
    pub tags: BTreeSet<Tag>,
    /// Who may call it.
    pub mode: ToolMode,
    /// The tools panel's group.
    pub category: String,
    /// Where it is reached.
    pub http: HttpBinding,
    /// Its arguments as a JSON Schema object.
    pub parameters: Value,
    /// The most items one call may carry (batch operations).
    pub max_batch_size: Option<usize>,
    /// The argument holding the item ids of a batch (`ids` by default).
    pub batch_argument: Option<String>,
    /// The declared preview operation.
    pub requires_preview: Option<String>,
    /// An auth header for this operation only.
    pub auth: Option<AuthHeader>,
    /// The field of each row this (readonly) operation returns that identifies the item (`id` by
    /// default): how a preview's rows are matched to a change's ids and its current values read.
    pub id_field: Option<String>,
    /// The argument holding the one item a call of this (non-batch) operation touches (`id` by
    /// default), e.g. `issue_number`.
    pub id_argument: Option<String>,
    /// The row fields that tell a person which item this is (an approval's identifying columns);
    /// empty: the id and the first title-like field the rows have.
    pub identifying_fields: Vec<String>,
    pub(super) validator: Arc<jsonschema::Validator>,
}

impl fmt::Debug for Operation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Operation")
            .field("name", &self.name)
            .field("entity", &self.entity)
            .field("tags", &self.tags)
            .finish_non_exhaustive()
    }
}

impl Operation {
    /// The names its parameters' schema lists as `required`, in order.
    pub fn required_arguments(&self) -> impl Iterator<Item = &str> {
        self.parameters
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }

    /// Whether it carries `tag`.
    #[must_use]
    pub fn has(&self, tag: Tag) -> bool {
        self.tags.contains(&tag)
    }

    /// Whether it changes state.
    #[must_use]
    pub fn is_mutating(&self) -> bool {
        self.has(Tag::Mutating)
    }

    /// Whether the model may call it.
    #[must_use]
    pub fn offered_to_model(&self) -> bool {
        matches!(self.mode, ToolMode::Llm | ToolMode::Both)
    }

    /// Whether a person may call it from the tools panel or `/tool`.
    #[must_use]
    pub fn offered_manually(&self) -> bool {
        matches!(self.mode, ToolMode::Manual | ToolMode::Both)
    }

    /// Checks `arguments` against the parameter schema; returns one message per problem.
    ///
    /// # Errors
    /// The messages, each naming the argument's JSON pointer.
    pub fn validate_arguments(&self, arguments: &Value) -> Result<(), Vec<String>> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(arguments)
            .map(|error| {
                let path = error.instance_path().to_string();
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!("{path}: {error}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The ids of the items a call touches: the batch argument's values, else an `ids` array,
    /// else the `id_argument` (`id` by default; an imported OpenAPI operation's is its path's
    /// last placeholder, so `/repos/{owner}/{repo}/issues/{issue_number}` touches one issue).
    #[must_use]
    pub fn item_ids(&self, arguments: &Value) -> Vec<String> {
        if self.has(Tag::Batch) {
            let key = self
                .batch_argument
                .as_deref()
                .unwrap_or(DEFAULT_BATCH_ARGUMENT);
            return arguments
                .get(key)
                .and_then(Value::as_array)
                .map(|ids| ids.iter().map(id_text).collect())
                .unwrap_or_default();
        }
        if let Some(ids) = arguments
            .get(DEFAULT_BATCH_ARGUMENT)
            .and_then(Value::as_array)
        {
            return ids.iter().map(id_text).collect();
        }
        arguments
            .get(self.id_argument.as_deref().unwrap_or(DEFAULT_ID_FIELD))
            .map(id_text)
            .into_iter()
            .collect()
    }

    /// The field identifying each row this operation returns (`id` unless the manifest says).
    #[must_use]
    pub fn row_id_field(&self) -> &str {
        self.id_field.as_deref().unwrap_or(DEFAULT_ID_FIELD)
    }

    /// The argument or batch argument that carries the ids of the items a call touches.
    #[must_use]
    pub fn id_arguments(&self) -> Vec<&str> {
        if self.has(Tag::Batch) {
            return vec![self
                .batch_argument
                .as_deref()
                .unwrap_or(DEFAULT_BATCH_ARGUMENT)];
        }
        vec![
            DEFAULT_BATCH_ARGUMENT,
            self.id_argument.as_deref().unwrap_or(DEFAULT_ID_FIELD),
        ]
    }

    /// The tool the model sees: the description plus what code will demand, and the schema.
    #[must_use]
    pub fn tool_definition(&self, manifest: &Manifest) -> ToolDefinition {
        let rules = crate::chat::policy::describe(manifest, self);
        let tags: Vec<&str> = self.tags.iter().map(|tag| tag.as_str()).collect();
        let description = if rules.is_empty() {
            format!("{} [{}]", self.description, tags.join(", "))
        } else {
            format!(
                "{} [{}] {}",
                self.description,
                tags.join(", "),
                rules.join(" ")
            )
        };
        ToolDefinition {
            name: self.name.clone(),
            description,
            parameters: self.parameters.clone(),
        }
    }
}

/// The default name of a batch operation's ids argument.
pub const DEFAULT_BATCH_ARGUMENT: &str = "ids";

/// The default name of the field (and argument) holding an item's id.
pub const DEFAULT_ID_FIELD: &str = "id";

/// An id as text, so `5` and `"5"` compare equal.
#[must_use]
pub fn id_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::manifest::{
        tests::{bulk_delete, manifest, search},
        ManifestError,
    };

    #[test]
    fn arguments_are_checked_against_the_schema() -> Result<(), ManifestError> {
        let loaded = Manifest::from_json(&manifest(vec![search(), bulk_delete()], json!({})))?;
        let bulk = loaded
            .operation("bulkDelete")
            .ok_or_else(|| ManifestError::Parse("missing".into()))?;
        assert!(bulk.validate_arguments(&json!({"ids": ["a", "b"]})).is_ok());
        assert!(bulk.validate_arguments(&json!({"ids": "a"})).is_err());
        assert!(bulk.validate_arguments(&json!({})).is_err());
        assert_eq!(
            bulk.item_ids(&json!({"ids": ["a", 7]})),
            vec!["a".to_owned(), "7".to_owned()]
        );
        Ok(())
    }
}
