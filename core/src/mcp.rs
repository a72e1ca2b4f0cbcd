//! The MCP server: an agent asks a person through a generated page, over the Model Context
//! Protocol (revision 2025-11-25, Streamable HTTP at `/mcp`).
//!
//! Four tools — `ask_person`, `get_answer`, `cancel_ask`, `list_asks` — over the asks domain
//! (`crate::asks`): an `ask_person` call IS an ask, parsed by [`NewAsk::parse_beside`] with
//! exactly the checks and messages of `POST /api/asks`, started as a run of the built-in `ask`
//! workflow (so it shows under `/runs` and `/api/asks/{id}`, survives restarts and resumes
//! once). What MCP adds lives here:
//! - [`arguments`]: the tools' own fields (`ask_id`, `wait_seconds`, `elicit`, `status`);
//! - [`wait`]: waiting for the answer inside a call, with progress notifications;
//! - [`elicit`]: URL-mode elicitation — the page link sent as `elicitation/create` to a client
//!   that declared the `url` capability, then `notifications/elicitation/complete`;
//! - [`tools`]: the tool definitions (input and output schemas);
//! - [`server`]: the `rmcp` handler that dispatches calls and turns [`AskError`]s into tool
//!   results with `isError` naming the field. Protocol errors are for protocol problems only
//!   (an unknown tool).
//!
//! A page link appears in plain text only in the `ask_person` call that creates it (its result
//! and its elicitation request), never in a log line: each call logs its tool, ask id and
//! outcome, and `telemetry` keeps `rmcp`'s own message dumps (debug and trace) out of the log.
//!
//! This module must not know axum: `http/mcp.rs` mounts [`server::TesseraMcp`] behind the API
//! token.
//!
//! [`NewAsk::parse_beside`]: crate::asks::NewAsk::parse_beside
//! [`AskError`]: crate::asks::AskError

pub mod apps;
pub mod arguments;
pub mod elicit;
pub mod inline;
pub mod server;
pub mod tools;
pub mod wait;

pub use server::TesseraMcp;
