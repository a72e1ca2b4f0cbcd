//! The results of an evaluation and how they are printed: one row per case, then the totals a
//! person compares models by.

use std::fmt::Write as _;

use serde::Serialize;

use super::meter::CallMeter;
use crate::{
    agent::generation::GenerationOutcome,
    llm::replay::{Expectation, ExpectedOutcome},
};

/// Bytes per token when a provider reports no usage: the usual rule of thumb for English and
/// JSON with today's tokenizers. Estimated figures are marked `~`.
pub const BYTES_PER_TOKEN: usize = 4;

/// Tokens spent by one generation's model calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    /// Prompt tokens, all turns.
    pub input: u64,
    /// Reply tokens, all turns.
    pub output: u64,
    /// Whether some of it is estimated from bytes ([`BYTES_PER_TOKEN`]) because the provider
    /// reported nothing for a call.
    pub estimated: bool,
}

impl Tokens {
    /// The provider's counts where it reported them, else estimates from the bytes sent and
    /// received.
    #[must_use]
    pub fn of(calls: &[CallMeter]) -> Self {
        let estimate = |bytes: usize| u64::try_from(bytes.div_ceil(BYTES_PER_TOKEN)).unwrap_or(0);
        let mut tokens = Self::default();
        for call in calls.iter().filter(|call| call.answered) {
            if call.usage.input_tokens == 0 && call.usage.output_tokens == 0 {
                tokens.input += estimate(call.request_bytes);
                tokens.output += estimate(call.response_bytes);
                tokens.estimated = true;
            } else {
                tokens.input += call.usage.input_tokens;
                tokens.output += call.usage.output_tokens;
            }
        }
        tokens
    }
}

/// One case's measurements.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioResult {
    /// The case: the scenario's name, or the transcript's.
    pub name: String,
    /// The scenario it ran.
    pub scenario: String,
    /// Form fields asked for (0: display-only).
    pub fields: usize,
    /// How the generation ended: `ok` (the model's page), `fell_back` (the heuristic's) or
    /// `failed` (no page at all).
    pub outcome: GenerationOutcome,
    /// The model's turns (a fallback's are not counted).
    pub turns: u32,
    /// Tokens the model's turns took.
    pub tokens: Tokens,
    /// Tool calls the loop read from the model's text.
    pub text_tool_calls: u64,
    /// The rules code reported to the model (`ValidateForm` errors, refused calls), in order.
    pub rules_reported: Vec<String>,
    /// Wall time of the whole generation, fallback included, ms.
    pub latency_ms: u64,
    /// The rendered page without the document shell, bytes.
    pub html_bytes: usize,
    /// The page tree's nodes.
    pub nodes: usize,
    /// The page's outline, one line per node (empty without a page).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outline: Vec<String>,
    /// What a replayed transcript claims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expectation>,
    /// The model's attempt as the generation record keeps it (turns, answers, usage), for
    /// `--record`.
    #[serde(skip)]
    pub first_attempt: serde_json::Value,
}

impl ScenarioResult {
    /// What differs from the transcript's claim, if anything.
    #[must_use]
    pub fn unmet_expectation(&self) -> Option<String> {
        let expect = self.expect.as_ref()?;
        let mut unmet = Vec::new();
        let outcome = match expect.outcome {
            ExpectedOutcome::Ok => GenerationOutcome::Ok,
            ExpectedOutcome::FellBack => GenerationOutcome::FellBack,
        };
        if outcome != self.outcome {
            unmet.push(format!(
                "outcome {} (claimed {})",
                self.outcome.as_str(),
                outcome.as_str()
            ));
        }
        if let Some(turns) = expect.turns.filter(|turns| *turns != self.turns) {
            unmet.push(format!("{} turns (claimed {turns})", self.turns));
        }
        if let Some(calls) = expect
            .text_tool_calls
            .filter(|calls| u64::from(*calls) != self.text_tool_calls)
        {
            unmet.push(format!(
                "{} text tool calls (claimed {calls})",
                self.text_tool_calls
            ));
        }
        if let Some(page) = expect.page.as_ref().filter(|page| **page != self.outline) {
            unmet.push(format!(
                "another page: {:?} (claimed {page:?})",
                self.outline
            ));
        }
        let missed: Vec<&String> = expect
            .reported
            .iter()
            .filter(|rule| !self.rules_reported.contains(rule))
            .collect();
        if !missed.is_empty() {
            unmet.push(format!(
                "never reported {missed:?} (reported {:?})",
                self.rules_reported
            ));
        }
        (!unmet.is_empty()).then(|| unmet.join(", "))
    }
}

/// Every case of one evaluation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The model evaluated (`heuristic`, `openai:gpt-4.1-mini`, or the transcripts' folder).
    pub model: String,
    /// One per case, in order.
    pub results: Vec<ScenarioResult>,
}

fn median(mut values: Vec<u64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_unstable();
    let middle = values.len() / 2;
    #[expect(clippy::cast_precision_loss, reason = "figures far below 2^52")]
    if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) as f64 / 2.0
    } else {
        values[middle] as f64
    }
}

#[expect(clippy::cast_precision_loss, reason = "figures far below 2^52")]
fn mean(values: &[u64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<u64>() as f64 / values.len() as f64
    }
}

#[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn widen(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

impl Report {
    /// Whether some case got no page at all — Tessera's failure, not the model's, since the
    /// heuristic fallback must always produce one.
    #[must_use]
    pub fn any_failed(&self) -> bool {
        self.results
            .iter()
            .any(|result| result.outcome == GenerationOutcome::Failed)
    }

    fn count(&self, outcome: GenerationOutcome) -> usize {
        self.results
            .iter()
            .filter(|result| result.outcome == outcome)
            .count()
    }

    /// The table and the totals, as `tessera eval` prints them.
    #[must_use]
    pub fn render(&self) -> String {
        let replayed = self.results.iter().any(|result| result.expect.is_some());
        let name_width = self
            .results
            .iter()
            .map(|result| result.name.len())
            .max()
            .unwrap_or(8)
            .max(8);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "tessera eval: {} cases with {}\n",
            self.results.len(),
            self.model
        );
        let _ = write!(
            out,
            "{:<name_width$}  {:>6}  {:<9}  {:>5}  {:>5}  {:>10}  {:>10}  {:>8}  {:>9}  {:>5}",
            "scenario",
            "fields",
            "outcome",
            "turns",
            "text",
            "tokens in",
            "tokens out",
            "ms",
            "html B",
            "nodes"
        );
        let _ = writeln!(out, "{}", if replayed { "  claim" } else { "" });
        for result in &self.results {
            let mark = if result.tokens.estimated { "~" } else { "" };
            let _ = write!(
                out,
                "{:<name_width$}  {:>6}  {:<9}  {:>5}  {:>5}  {:>10}  {:>10}  {:>8}  {:>9}  {:>5}",
                result.name,
                result.fields,
                result.outcome.as_str(),
                result.turns,
                result.text_tool_calls,
                format!("{mark}{}", result.tokens.input),
                format!("{mark}{}", result.tokens.output),
                result.latency_ms,
                result.html_bytes,
                result.nodes,
            );
            let claim = match (&result.expect, result.unmet_expectation()) {
                (None, _) => String::new(),
                (Some(_), None) => "  as claimed".to_owned(),
                (Some(_), Some(unmet)) => format!("  NOT AS CLAIMED: {unmet}"),
            };
            let _ = writeln!(out, "{claim}");
        }
        out.push('\n');
        out.push_str(&self.totals());
        out
    }

    /// The overall figures.
    #[must_use]
    pub fn totals(&self) -> String {
        let total = self.results.len();
        let valid = self.count(GenerationOutcome::Ok);
        let fell_back = self.count(GenerationOutcome::FellBack);
        let failed = self.count(GenerationOutcome::Failed);
        let turns: Vec<u64> = self
            .results
            .iter()
            .map(|result| u64::from(result.turns))
            .collect();
        let form_turns: Vec<u64> = self
            .results
            .iter()
            .filter(|result| (1..=30).contains(&result.fields))
            .map(|result| u64::from(result.turns))
            .collect();
        let tokens_in: Vec<u64> = self.results.iter().map(|r| r.tokens.input).collect();
        let tokens_out: Vec<u64> = self.results.iter().map(|r| r.tokens.output).collect();
        let estimated = self.results.iter().any(|result| result.tokens.estimated);
        let mark = if estimated { "~" } else { "" };
        let latency: Vec<u64> = self.results.iter().map(|r| r.latency_ms).collect();
        let html: Vec<u64> = self.results.iter().map(|r| widen(r.html_bytes)).collect();
        let nodes: Vec<u64> = self.results.iter().map(|r| widen(r.nodes)).collect();
        let text_calls: u64 = self.results.iter().map(|r| r.text_tool_calls).sum();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "valid page   {valid}/{total} ({:.0}%)   fell back {fell_back}/{total} ({:.0}%)   failed {failed}",
            percent(valid, total),
            percent(fell_back, total)
        );
        let _ = writeln!(
            out,
            "turns        median {:.1}, mean {:.2}, max {}; forms of 1-30 fields: median {:.1} ({} forms)",
            median(turns.clone()),
            mean(&turns),
            turns.iter().max().unwrap_or(&0),
            median(form_turns.clone()),
            form_turns.len()
        );
        let _ = writeln!(
            out,
            "tokens/page  in {mark}{:.0} (median {mark}{:.0}), out {mark}{:.0} (median {mark}{:.0}){}",
            mean(&tokens_in),
            median(tokens_in.clone()),
            mean(&tokens_out),
            median(tokens_out.clone()),
            if estimated {
                format!("; ~ = estimated from bytes / {BYTES_PER_TOKEN} where the model reports no usage")
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "latency      median {:.0} ms, total {} ms",
            median(latency.clone()),
            latency.iter().sum::<u64>()
        );
        let _ = writeln!(
            out,
            "page size    median {:.0} bytes of HTML, median {:.0} nodes",
            median(html),
            median(nodes)
        );
        let _ = writeln!(out, "text calls   {text_calls} tool calls read from text");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;

    fn call(request_bytes: usize, response_bytes: usize, usage: Usage) -> CallMeter {
        CallMeter {
            answered: true,
            request_bytes,
            response_bytes,
            usage,
            elapsed_ms: 1,
        }
    }

    #[test]
    fn reported_usage_wins_and_missing_usage_is_estimated_and_marked() {
        let reported = Tokens::of(&[call(
            4000,
            400,
            Usage {
                input_tokens: 1234,
                output_tokens: 56,
            },
        )]);
        assert_eq!(
            reported,
            Tokens {
                input: 1234,
                output: 56,
                estimated: false
            }
        );
        let estimated = Tokens::of(&[call(4001, 40, Usage::default())]);
        assert_eq!(
            estimated,
            Tokens {
                input: 1001,
                output: 10,
                estimated: true
            }
        );
    }

    #[test]
    fn medians_of_even_and_odd_counts() {
        assert!((median(vec![3, 1, 2]) - 2.0).abs() < f64::EPSILON);
        assert!((median(vec![4, 1, 2, 3]) - 2.5).abs() < f64::EPSILON);
        assert!(median(Vec::new()).abs() < f64::EPSILON);
    }

    #[test]
    fn a_result_that_differs_from_its_claim_says_how() {
        let result = ScenarioResult {
            name: "t".into(),
            scenario: "s".into(),
            fields: 3,
            outcome: GenerationOutcome::FellBack,
            turns: 10,
            tokens: Tokens::default(),
            text_tool_calls: 0,
            rules_reported: vec!["missing_field".into()],
            latency_ms: 1,
            html_bytes: 1,
            nodes: 1,
            outline: Vec::new(),
            expect: Some(Expectation {
                outcome: ExpectedOutcome::Ok,
                turns: Some(3),
                text_tool_calls: Some(2),
                page: None,
                reported: vec!["missing_field".into(), "no_submit".into()],
            }),
            first_attempt: serde_json::Value::Null,
        };
        assert_eq!(
            result.unmet_expectation().as_deref(),
            Some(
                "outcome fell_back (claimed ok), 10 turns (claimed 3), 0 text tool calls \
                 (claimed 2), never reported [\"no_submit\"] (reported [\"missing_field\"])"
            )
        );
    }
}
