//! Where a keyed, hosted provider is reached. Anthropic and Gemini need the same three facts;
//! what differs between them is the default base URL and the header the key travels in, and
//! those stay with each provider.

use tessera_settings::Secret;

/// A hosted provider's model, base URL and key.
#[derive(Clone, Debug)]
pub struct HostedConfig {
    /// The model, e.g. `claude-sonnet-4-5` or `gemini-2.5-flash`.
    pub model: String,
    /// The base URL, without the API's version path (`/v1`, `/v1beta`).
    pub base_url: String,
    /// The key, sent in the provider's key header, never in the URL.
    pub api_key: Secret,
}

impl HostedConfig {
    /// `model` at `base_url` (the provider's own, or a proxy's), with `api_key`.
    #[must_use]
    pub fn new(model: impl Into<String>, base_url: impl Into<String>, api_key: Secret) -> Self {
        Self {
            model: model.into(),
            base_url: base_url.into(),
            api_key,
        }
    }
}
