//! Wire types: the parts of a `generateContent` reply and of an error body that are read.
//!
//! Unknown fields are ignored, so additions on Google's side do not break parsing.

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GenerateResponse {
    #[serde(default)]
    pub(super) candidates: Vec<Candidate>,
    pub(super) prompt_feedback: Option<PromptFeedback>,
    pub(super) usage_metadata: Option<UsageMetadata>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Candidate {
    pub(super) content: Option<Content>,
    pub(super) finish_reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Content {
    #[serde(default)]
    pub(super) parts: Vec<Part>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Part {
    pub(super) text: Option<String>,
    #[serde(default)]
    pub(super) thought: bool,
    pub(super) function_call: Option<FunctionCall>,
    pub(super) thought_signature: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct FunctionCall {
    pub(super) id: Option<String>,
    pub(super) name: String,
    #[serde(default)]
    pub(super) args: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PromptFeedback {
    pub(super) block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UsageMetadata {
    #[serde(default)]
    pub(super) prompt_token_count: u64,
    #[serde(default)]
    pub(super) candidates_token_count: u64,
    #[serde(default)]
    pub(super) thoughts_token_count: u64,
}

#[derive(Deserialize)]
pub(super) struct ErrorBody {
    pub(super) error: ErrorDetail,
}

#[derive(Deserialize)]
pub(super) struct ErrorDetail {
    #[serde(default)]
    pub(super) details: Vec<Value>,
}
