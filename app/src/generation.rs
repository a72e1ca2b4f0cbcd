//! The generation page (admin): what the model was asked, each tool call it made and what code
//! decided about it, the validation result and the outcome — the audit trail of one page.
//!
//! Views only: the server fills [`GenerationDetail`] from the stored record and its events.

use leptos::prelude::*;

use crate::runs::StatusBadge;

/// One tool call and code's answer to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallView {
    /// The tool (a component name, `ValidateForm`, `Finish`…).
    pub tool: String,
    /// Its arguments, pretty JSON.
    pub arguments: String,
    /// What code answered (`{"id": "c3"}` or the error the model was told).
    pub result: String,
    /// Whether code refused the call.
    pub refused: bool,
}

/// One model turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnView {
    /// Its number, from 1.
    pub turn: i64,
    /// Any text the model wrote.
    pub text: Option<String>,
    /// Its tool calls, in order.
    pub calls: Vec<CallView>,
}

/// One attempt (the configured model, then the heuristic fallback if it failed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptView {
    /// The model.
    pub model: String,
    /// How it ended: `valid`, `exhausted` or `model_error`.
    pub end: String,
    /// The model's error, when it failed.
    pub error: Option<String>,
    /// What code's validation still found wrong at the end (empty when valid).
    pub last_errors: Vec<String>,
    /// Its turns.
    pub turns: Vec<TurnView>,
}

/// The generation page's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerationDetail {
    /// Record id.
    pub id: String,
    /// `provider` / `model`.
    pub model: String,
    /// `ok`, `fell_back` or `failed`.
    pub outcome: String,
    /// The prompt as given, when the record's events kept it.
    pub prompt: Option<String>,
    /// Turns, tokens in and out.
    pub turns: i64,
    /// Input tokens.
    pub tokens_in: i64,
    /// Output tokens.
    pub tokens_out: i64,
    /// Wall time, ms.
    pub latency_ms: i64,
    /// Whether the page cache answered.
    pub cache_hit: bool,
    /// When it was recorded, formatted.
    pub created: String,
    /// The attempts, in order.
    pub attempts: Vec<AttemptView>,
    /// Where "back" goes (the run's timeline, when known).
    pub back: String,
}

fn call_view(call: CallView) -> impl IntoView {
    let decision = if call.refused { "refused" } else { "accepted" };
    let class = if call.refused {
        "rounded border border-red-300 p-2 dark:border-red-700"
    } else {
        "rounded border border-slate-200 p-2 dark:border-slate-700"
    };
    view! {
        <li class=class data-testid="tool-call">
            <div class="flex flex-wrap items-center gap-2">
                <span class="font-mono font-semibold">{call.tool}</span>
                <span class="text-sm" data-testid="decision">{format!("code: {decision}")}</span>
            </div>
            <details class="mt-1"><summary class="cursor-pointer text-sm text-indigo-700 dark:text-indigo-300">"Arguments"</summary>
                <pre class="mt-1 overflow-auto rounded bg-slate-900 p-2 text-xs text-slate-100"><code>{call.arguments}</code></pre></details>
            <pre class="mt-1 overflow-auto whitespace-pre-wrap text-xs" data-testid="call-result"><code>{call.result}</code></pre>
        </li>
    }
}

fn attempt_view(number: usize, attempt: AttemptView) -> impl IntoView {
    let turns = attempt
        .turns
        .into_iter()
        .map(|turn| {
            let calls = turn.calls.into_iter().map(call_view).collect_view();
            view! {
                <li class="space-y-2">
                    <h4 class="font-semibold">{format!("Turn {}", turn.turn)}</h4>
                    {turn.text.map(|text| view! { <p class="whitespace-pre-wrap text-sm">{text}</p> })}
                    <ol class="space-y-2">{calls}</ol>
                </li>
            }
        })
        .collect_view();
    let valid = attempt.last_errors.is_empty() && attempt.end == "valid";
    let errors = attempt
        .last_errors
        .into_iter()
        .map(|error| view! { <li>{error}</li> })
        .collect_view();
    view! {
        <section class="space-y-3 rounded border border-slate-200 p-3 dark:border-slate-700" data-testid="attempt">
            <h3 class="text-lg font-semibold">{format!("Attempt {number}: {}", attempt.model)}</h3>
            <p data-testid="validation">{if valid { "Validation: OK (code's ValidateForm passed)".to_owned() } else { format!("Validation: not OK ({})", attempt.end) }}</p>
            {attempt.error.map(|error| view! { <p role="alert" class="text-red-800 dark:text-red-300">{error}</p> })}
            <ul class="list-disc pl-6 text-sm text-red-800 dark:text-red-300">{errors}</ul>
            <ol class="space-y-3">{turns}</ol>
        </section>
    }
}

/// The body of `GET /runs/generations/{id}`.
#[component]
pub fn GenerationPage(detail: GenerationDetail) -> impl IntoView {
    let GenerationDetail {
        id,
        model,
        outcome,
        prompt,
        turns,
        tokens_in,
        tokens_out,
        latency_ms,
        cache_hit,
        created,
        attempts,
        back,
    } = detail;
    let attempts = attempts
        .into_iter()
        .enumerate()
        .map(|(index, attempt)| attempt_view(index + 1, attempt))
        .collect_view();
    view! {
        <div class="space-y-6">
            <p><a href=back class="text-indigo-700 underline dark:text-indigo-300">"Back to the run"</a></p>
            <div class="flex flex-wrap items-center gap-3">
                <h1 class="text-3xl font-bold">"Generation"</h1>
                <StatusBadge status=outcome/>
                <span class="font-mono text-sm" data-testid="generation-id">{id}</span>
            </div>
            <dl class="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
                <dt class="font-semibold">"Model"</dt><dd data-testid="generation-model">{model}</dd>
                <dt class="font-semibold">"Recorded"</dt><dd>{created}</dd>
                <dt class="font-semibold">"Turns"</dt><dd>{turns}</dd>
                <dt class="font-semibold">"Tokens"</dt><dd>{format!("{tokens_in} in, {tokens_out} out")}</dd>
                <dt class="font-semibold">"Time"</dt><dd>{format!("{latency_ms} ms")}</dd>
                <dt class="font-semibold">"Page cache"</dt><dd>{if cache_hit { "hit" } else { "miss" }}</dd>
            </dl>
            <section aria-labelledby="prompt-title" class="space-y-2">
                <h2 id="prompt-title" class="text-xl font-semibold">"Prompt"</h2>
                <pre class="overflow-auto whitespace-pre-wrap rounded bg-slate-100 p-3 text-sm dark:bg-slate-800" data-testid="generation-prompt">{prompt.unwrap_or_else(|| "(not recorded)".to_owned())}</pre>
            </section>
            <section aria-labelledby="attempts-title" class="space-y-3">
                <h2 id="attempts-title" class="text-xl font-semibold">"Tool calls and code's decisions"</h2>
                {attempts}
            </section>
        </div>
    }
}

/// [`GenerationPage`] with its view type erased (see the crate's documentation).
#[must_use]
pub fn generation_page(detail: GenerationDetail) -> AnyView {
    view! { <GenerationPage detail/> }.into_any()
}
