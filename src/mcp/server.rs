//! The `rmcp` server handler: the tools, dispatched onto the asks domain.
//!
//! Each call's arguments are checked first ([`super::arguments`]); a wrong one is a tool result
//! with `isError: true` whose text names the field (`schema.properties.x: …`), as MCP asks for
//! input errors, so the model can correct its call. An unknown tool is a protocol error. A
//! successful call answers the ask (`AskView`, as `GET /api/asks/{id}` shows it) as structured
//! content, and the same JSON as text for clients that read only text.

use std::borrow::Cow;

use rmcp::{
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
        ServerConfig,
    },
    service::RequestContext,
    ErrorData, RoleServer, ServerHandler,
};
use serde_json::{json, Value};

use super::{
    arguments::{self, AskPerson, Elicit},
    elicit::{self, Sent},
    tools,
    wait::{wait_for_answer, Progress},
};
use crate::{
    asks::{
        cancel_ask, create_ask, decline_ask, list_asks, AskCapabilities, AskError, AskStatus,
        AskView, LINK_WAIT,
    },
    workflow::Runner,
};

/// The MCP revision this server implements.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The MCP server: one per session, cheap to clone (the runner is shared).
#[derive(Clone)]
pub struct TesseraMcp {
    runner: Runner,
    public_url: String,
    capabilities: AskCapabilities,
}

impl std::fmt::Debug for TesseraMcp {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TesseraMcp")
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

/// What a tool answers: the structured content and, sometimes, a sentence for the model.
struct Answer {
    structured: Value,
    note: Option<String>,
}

impl Answer {
    fn of(view: &AskView) -> Result<Self, AskError> {
        Ok(Self {
            structured: serde_json::to_value(view).map_err(anyhow::Error::from)?,
            note: None,
        })
    }

    fn noting(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

impl TesseraMcp {
    /// A server over `runner`, making links under `public_url`, allowing what `capabilities`
    /// says (the same as `POST /api/asks`).
    #[must_use]
    pub fn new(runner: Runner, public_url: String, capabilities: AskCapabilities) -> Self {
        Self {
            runner,
            public_url,
            capabilities,
        }
    }

    async fn dispatch(
        &self,
        name: &str,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answer, AskError> {
        match name {
            tools::ASK_PERSON => {
                let call = arguments::ask_person(arguments, &self.capabilities)?;
                self.ask_person(call, context).await
            }
            tools::GET_ANSWER => {
                let call = arguments::get_answer(arguments)?;
                let view = wait_for_answer(
                    self.runner.store(),
                    &call.ask_id,
                    tokio::time::Instant::now(),
                    call.wait,
                    progress(context),
                    &context.ct,
                )
                .await?;
                Answer::of(&view)
            }
            tools::CANCEL_ASK => {
                let ask_id = arguments::cancel_ask(arguments)?;
                Answer::of(&cancel_ask(&self.runner, &ask_id).await?)
            }
            // `list_asks`: `call_tool` refused every other name.
            _ => {
                let status = arguments::list_asks(arguments)?;
                let asks = list_asks(self.runner.store(), status).await?;
                Ok(Answer {
                    structured: json!({ "asks": asks }),
                    note: None,
                })
            }
        }
    }

    /// Creates the ask; then hands the link over as an elicitation, waits for the answer, or
    /// returns the link, as the call asked.
    async fn ask_person(
        &self,
        call: AskPerson,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answer, AskError> {
        call.ask.check_destinations(&self.capabilities).await?;
        let prompt = call.ask.prompt.clone();
        let created = create_ask(&self.runner, &self.public_url, call.ask, LINK_WAIT).await?;
        let Some(link) = created.link.clone() else {
            // The page is not made yet (or failed), or it has assignees, whose links are in
            // `links`: get_answer follows it.
            return Answer::of(&created);
        };
        let eliciting = call.elicit == Some(Elicit::Url);
        if eliciting && !elicit::client_opens_urls(&context.peer) {
            return Ok(Answer::of(&created)?.noting(
                "This client did not declare the elicitation `url` capability: give the person the link.",
            ));
        }
        // `wait` bounds the whole call: the client's answer to the elicitation, then the
        // person's answer; the elicitation always gets at least a minute to reach the person.
        let started = tokio::time::Instant::now();
        if eliciting {
            let timeout = call.wait.max(elicit::MIN_TIMEOUT);
            match elicit::send_link(&context.peer, &created.id, &prompt, &link, timeout).await {
                Sent::Accepted => {}
                Sent::Declined => {
                    let declined = decline_ask(&self.runner, &created.id, None).await?;
                    return Ok(
                        Answer::of(&declined)?.noting("The person declined; the ask is declined.")
                    );
                }
                Sent::Cancelled => {
                    let cancelled = cancel_ask(&self.runner, &created.id).await?;
                    return Ok(Answer::of(&cancelled)?
                        .noting("The person dismissed the request; the ask is cancelled."));
                }
                Sent::Failed => {
                    return Ok(Answer::of(&created)?
                        .noting("The client did not open the page: give the person the link."))
                }
            }
        }
        let mut view = if eliciting || !call.wait.is_zero() {
            wait_for_answer(
                self.runner.store(),
                &created.id,
                started,
                call.wait,
                progress(context),
                &context.ct,
            )
            .await?
        } else {
            created
        };
        if eliciting && !view.status.is_open() {
            elicit::send_complete(&context.peer, &view.id).await;
        }
        // The link is still the one way in while the ask waits; this answer is the only place
        // it is ever shown.
        if view.status == AskStatus::Waiting {
            view.link = Some(link);
        }
        Answer::of(&view)
    }
}

/// Where a call's progress goes, when its client asked for progress.
fn progress(context: &RequestContext<RoleServer>) -> Option<Progress<'_>> {
    context.meta.get_progress_token().map(|token| Progress {
        peer: &context.peer,
        token,
    })
}

/// A tool error the model can act on: the field at fault and what to send instead.
fn tool_error(tool: &str, error: AskError) -> CallToolResult {
    let text = match error {
        AskError::Invalid { field, message } => format!("{field}: {message}"),
        AskError::NotFound => "ask_id: no ask has this id".to_owned(),
        AskError::Conflict(message) => message,
        AskError::Unexpected(error) => {
            tracing::error!(mcp.tool = %tool, error = format!("{error:#}"), "an MCP call failed");
            return CallToolResult::error(vec![ContentBlock::text(
                "the server failed to do this; try again later",
            )]);
        }
    };
    tracing::info!(mcp.tool = %tool, reason = %text, "MCP call refused");
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl ServerHandler for TesseraMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_protocol_version(PROTOCOL_VERSION)
            .with_server_info(
                Implementation::new("tessera", crate::VERSION).with_title("Tessera"),
            )
            .with_instructions(
                "Ask a person through a generated web page: ask_person creates the ask and returns its link (give it to the person) or, with wait_seconds or elicit, the typed answer; get_answer reads or waits for it. With assignees, each named person gets a link of their own (in `links`) and `approvals.required` of them must approve; `answers` says who answered.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&PROTOCOL_VERSION))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::definitions()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if !tools::definitions().iter().any(|tool| tool.name == name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        }
        let arguments = request.arguments.clone().unwrap_or_default();
        let result = match self.dispatch(name, arguments, &context).await {
            Ok(answer) => {
                let ask_id = answer.structured["id"].as_str().unwrap_or("-");
                let status = answer.structured["status"].as_str().unwrap_or("listed");
                tracing::info!(mcp.tool = %name, ask.id = %ask_id, ask.status = %status, "MCP call answered");
                let mut result = CallToolResult::structured(answer.structured);
                if let Some(note) = answer.note {
                    result.content.push(ContentBlock::text(note));
                }
                result
            }
            Err(error) => tool_error(name, error),
        };
        Ok(result.into())
    }
}
