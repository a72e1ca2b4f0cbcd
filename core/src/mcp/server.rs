//! The `rmcp` server handler: the tools, dispatched onto the asks domain.
//!
//! Each call's arguments are checked first ([`super::arguments`]); a wrong one is a tool result
//! with `isError: true` whose text names the field (`schema.properties.x: …`), as MCP asks for
//! input errors, so the model can correct its call. An unknown tool is a protocol error. A
//! successful call answers the ask (`AskView`, as `GET /api/asks/{id}` shows it) as structured
//! content, and the same JSON as text for clients that read only text.

use std::{borrow::Cow, sync::Arc, time::Duration};

use rmcp::{
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        JsonObject, ListResourcesResult, ListToolsResult, MetaObject, PaginatedRequestParams,
        ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
        Resource, ResourceContents, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    ErrorData, RoleServer, ServerHandler,
};
use serde_json::{json, Value};

use super::{
    apps::{self, PAGE_META},
    arguments::{self, AskPerson, Elicit},
    elicit::{self, Sent},
    inline, tools,
    wait::{wait_for_answer, Progress},
};
use crate::{
    asks::{
        cancel_ask, create_ask, create_ask_with_view, decline_ask, list_asks, AskCapabilities,
        AskError, AskStatus, AskView, LINK_WAIT,
    },
    pages::token::PageToken,
    workflow::Runner,
};

/// How long an `ask_person` shown inline waits for its page before answering without it (the
/// view then asks for it): the call returns at once, not when the person answers.
pub const INLINE_PAGE_WAIT: Duration = Duration::from_secs(5);

/// The MCP revision this server implements.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The MCP server: one per session, cheap to clone (the runner is shared).
#[derive(Clone)]
pub struct TesseraMcp {
    runner: Runner,
    public_url: String,
    capabilities: AskCapabilities,
    views: Views,
}

/// What the page's MCP App view is served with.
#[derive(Clone, Debug, Default)]
pub struct Views {
    /// The site's stylesheet, inlined into the view's document (empty without a built site).
    pub stylesheet: Arc<str>,
    /// How long a receipt stays readable after the answer (`TESSERA_RECEIPT_LIFETIME_SECS`).
    pub receipt_lifetime: Duration,
}

impl std::fmt::Debug for TesseraMcp {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TesseraMcp")
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

/// What a tool answers: the structured content, sometimes a sentence for the model, and
/// sometimes the page for an MCP App's view (in `_meta`, which hosts keep from the model).
struct Answer {
    structured: Value,
    note: Option<String>,
    page: Option<Value>,
}

impl Answer {
    fn of(view: &AskView) -> Result<Self, AskError> {
        Ok(Self {
            structured: serde_json::to_value(view).map_err(anyhow::Error::from)?,
            note: None,
            page: None,
        })
    }

    fn shown(shown: &inline::Shown, view: &str) -> Self {
        Self {
            structured: shown.structured(),
            note: Some(shown.sentence().to_owned()),
            page: Some(shown.meta(view)),
        }
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
            views: Views::default(),
        }
    }

    /// Serves the page's MCP App view with `views`.
    #[must_use]
    pub fn with_views(mut self, views: Views) -> Self {
        self.views = views;
        self
    }

    async fn dispatch(
        &self,
        name: &str,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answer, AskError> {
        let lifetime = self.views.receipt_lifetime;
        match name {
            tools::ASK_PERSON => {
                let call = arguments::ask_person(arguments, &self.capabilities)?;
                if !apps::client_renders_apps(&context.peer) {
                    return self.ask_person(call, context).await;
                }
                if !call.ask.people.is_assigned() {
                    return self.ask_person_inline(call).await;
                }
                // The host shows the view for every call of the tool: it says the ask went to
                // the people it names, and shows none of their links.
                let mut answer = self.ask_person(call, context).await?;
                answer.page = Some(json!({ "status": "elsewhere" }));
                Ok(answer)
            }
            tools::SHOW_PAGE => {
                let call = arguments::show_page(arguments)?;
                let shown = inline::show(&self.runner, &call.view, &call.query, lifetime).await?;
                Ok(Answer::shown(&shown, &call.view))
            }
            tools::SUBMIT_ANSWER => {
                let call = arguments::submit_answer(arguments)?;
                let shown = inline::submit(&self.runner, &call.view, &call.body, lifetime).await?;
                Ok(Answer::shown(&shown, &call.view))
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
                    page: None,
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

impl TesseraMcp {
    /// Creates the ask with a view and answers at once: the host shows the page inline, so the
    /// model gets the ask's id and a sentence, and only the view gets the page (its view, its
    /// HTML, and the link for "open in the browser") in `_meta`. `wait_seconds` and `elicit`
    /// have nothing to do here: the person is already looking at the page.
    async fn ask_person_inline(&self, call: AskPerson) -> Result<Answer, AskError> {
        call.ask.check_destinations(&self.capabilities).await?;
        let view = PageToken::generate();
        let mut created = create_ask_with_view(
            &self.runner,
            &self.public_url,
            call.ask,
            INLINE_PAGE_WAIT,
            &view.hash(),
        )
        .await?;
        let link = created.link.take();
        let shown =
            inline::show(&self.runner, view.as_str(), "", self.views.receipt_lifetime).await?;
        let mut page = shown.meta(view.as_str());
        if let (Some(link), Some(page)) = (link, page.as_object_mut()) {
            page.insert("link".to_owned(), Value::String(link));
        }
        let sentence = match shown.status {
            inline::Status::Preparing => "A page for the person is being prepared and will be shown to them in this conversation",
            _ => "A page was shown to the person in this conversation",
        };
        Ok(Answer {
            note: Some(format!(
                "{sentence}. Call get_answer with ask_id \"{}\" (and wait_seconds to wait) for their typed answer.",
                created.id
            )),
            structured: serde_json::to_value(&created).map_err(anyhow::Error::from)?,
            page: Some(page),
        })
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
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let apps = apps::client_renders_apps(&context.peer);
        Ok(ListToolsResult::with_all_items(tools::definitions_for(
            apps,
        )))
    }

    /// The page's views for a client that renders MCP Apps (every version, so a conversation
    /// that named an older one still shows); nothing for one that does not.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if !apps::client_renders_apps(&context.peer) {
            return Ok(ListResourcesResult::with_all_items(Vec::new()));
        }
        let resources = apps::uris()
            .map(|uri| {
                let mut resource = Resource::new(uri, "Tessera page")
                    .with_mime_type(apps::MIME_TYPE)
                    .with_description("A page a person answers, shown inline.");
                resource.meta = Some(apps::resource_meta());
                resource
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(html) = apps::document(&request.uri, &self.views.stylesheet) else {
            return Err(ErrorData::resource_not_found(
                format!("no resource `{}`", request.uri),
                None,
            ));
        };
        let contents = ResourceContents::TextResourceContents {
            uri: request.uri,
            mime_type: Some(apps::MIME_TYPE.to_owned()),
            text: html,
            meta: Some(apps::resource_meta()),
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        // The view's tools are listed only to a client that renders MCP Apps, but answered on
        // any session: a host may call them over a session of its own (the view is the
        // capability, not the session).
        if !tools::is_known(name) {
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
                if let Some(page) = answer.page {
                    let mut meta = MetaObject::new();
                    meta.0.insert(PAGE_META.to_owned(), page);
                    result.meta = Some(meta);
                }
                result
            }
            Err(error) => tool_error(name, error),
        };
        Ok(result.into())
    }
}
