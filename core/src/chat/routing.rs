//! Turn routing: which micro-thread a person's message belongs to, decided by code.
//!
//! The rules of the deterministic-orchestration design, in priority order:
//!
//! 1. **Override** ("stop", "cancel", "actually …", "… instead", "ignore that", "scrap that")
//!    beats everything, including a pending question.
//! 2. **Answer to a pending question**, only when the text fits the expected type (yes/no,
//!    number, date, one of the options); the most recently asked fitting question wins.
//! 3. **Status nudge** ("any luck?", "update?", "?") attaches to the most recent `in_progress` or
//!    `blocked` thread, even when another thread has a pending question.
//! 4. **Filler** ("thanks", "ok") attaches to the active thread and changes nothing.
//! 5. A pending **free-text** question takes any other text.
//! 6. Anything else is a **new request** and opens a thread.
//!
//! "ok" is filler, not "yes": a destructive confirmation needs an explicit yes. Routing is a pure
//! function of the text, the session's threads and today's date, so it is table-tested below and
//! costs microseconds per turn.

use serde::{Deserialize, Serialize};

use super::{
    calendar::CivilDate,
    threads::{ExpectedType, Thread, ThreadId, ThreadStatus},
};

/// How a turn is handled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "route", rename_all = "snake_case")]
pub enum Route {
    /// Steering: stop the active thread, and maybe start over with `rest`.
    Override {
        /// Stop only, or stop and do `rest` instead.
        kind: OverrideKind,
        /// The thread it overrides (the most recent unfinished one).
        thread: Option<ThreadId>,
        /// The new request, for a redirect.
        rest: Option<String>,
    },
    /// Fills a pending question.
    Answer {
        /// The thread that asked.
        thread: ThreadId,
        /// The answer, typed.
        answer: TypedAnswer,
    },
    /// Asks how a running thread is doing.
    StatusNudge {
        /// The thread to report on.
        thread: Option<ThreadId>,
    },
    /// Starts a new thread.
    NewRequest {
        /// The request.
        text: String,
    },
    /// Acknowledgement; nothing changes.
    Filler {
        /// The active thread.
        thread: Option<ThreadId>,
    },
}

impl Route {
    /// The route's name, for headers and logs.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Override { .. } => "override",
            Self::Answer { .. } => "answer_to_pending",
            Self::StatusNudge { .. } => "status_nudge",
            Self::NewRequest { .. } => "new_request",
            Self::Filler { .. } => "filler",
        }
    }
}

/// The two kinds of override.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverrideKind {
    /// Stop and do nothing else.
    Stop,
    /// Stop and do something else.
    Redirect,
}

/// A typed answer to a pending question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum TypedAnswer {
    /// Yes (`true`) or no.
    YesNo(bool),
    /// A number.
    Number(f64),
    /// A date, `YYYY-MM-DD`.
    Date(String),
    /// One of the options, as the option is spelled.
    Option(String),
    /// Any text.
    Text(String),
}

const STOP_PHRASES: &[&str] = &[
    "stop",
    "stop it",
    "stop that",
    "stop this",
    "stop now",
    "please stop",
    "cancel",
    "cancel it",
    "cancel that",
    "cancel this",
    "abort",
    "halt",
    "never mind",
    "nevermind",
    "forget it",
    "forget that",
    "ignore that",
    "ignore it",
    "ignore this",
    "scrap that",
    "scrap it",
    "don't",
    "dont",
    "don't do it",
    "dont do it",
    "wait stop",
    "no stop",
];

const REDIRECT_OPENERS: &[&str] = &[
    "actually",
    "instead",
    "ignore that",
    "scrap that",
    "no wait",
    "wait",
    "never mind",
    "forget that",
];

const NUDGES: &[&str] = &[
    "any luck",
    "any update",
    "any updates",
    "update",
    "updates",
    "status",
    "status update",
    "how's it going",
    "hows it going",
    "how is it going",
    "how's it looking",
    "progress",
    "any progress",
    "done yet",
    "is it done",
    "are you done",
    "still there",
    "hello",
    "hello?",
    "any news",
    "news",
    "how far",
    "how far along",
    "where are we",
];

const FILLERS: &[&str] = &[
    "thanks",
    "thank you",
    "thanks!",
    "thx",
    "ty",
    "ok",
    "okay",
    "k",
    "cool",
    "great",
    "nice",
    "got it",
    "perfect",
    "awesome",
    "alright",
    "all right",
    "sounds good",
    "good",
    "👍",
    "ok thanks",
    "okay thanks",
    "ok thank you",
    "great thanks",
    "cheers",
];

const YES: &[&str] = &[
    "yes",
    "y",
    "yeah",
    "yep",
    "yup",
    "sure",
    "confirm",
    "confirmed",
    "approve",
    "approved",
    "go ahead",
    "do it",
    "proceed",
    "please do",
    "yes please",
    "yes do it",
    "yes go ahead",
    "affirmative",
    "go",
];

const NO: &[&str] = &[
    "no",
    "n",
    "nope",
    "nah",
    "do not",
    "deny",
    "decline",
    "reject",
    "no thanks",
    "no thank you",
    "don't proceed",
    "do not proceed",
];

/// Lower case, single spaces, no punctuation at either end.
fn normalize(text: &str) -> String {
    let lowered = text.trim().to_lowercase().replace('’', "'");
    let words: Vec<&str> = lowered.split_whitespace().collect();
    words
        .join(" ")
        .trim_matches(|character: char| character.is_ascii_punctuation() && character != '\'')
        .trim()
        .to_owned()
}

fn is_stop(normalized: &str) -> bool {
    STOP_PHRASES.contains(&normalized) || normalized.starts_with("stop ")
}

/// An override, if the text is one: stop, or redirect with the request that remains.
fn detect_override(text: &str) -> Option<(OverrideKind, Option<String>)> {
    let normalized = normalize(text);
    if is_stop(&normalized) {
        return Some((OverrideKind::Stop, None));
    }
    let mut rest = None;
    for opener in REDIRECT_OPENERS {
        if let Some(after) = normalized.strip_prefix(opener) {
            if after.is_empty() || after.starts_with([' ', ',', ';', ':', '-', '.', '!']) {
                rest = Some(
                    after
                        .trim_start_matches([' ', ',', ';', ':', '-', '.', '!'])
                        .to_owned(),
                );
                break;
            }
        }
    }
    if rest.is_none() {
        let stripped = normalized
            .strip_suffix(" instead")
            .or_else(|| normalized.strip_suffix(", instead"));
        rest = stripped.map(|request| request.trim_end_matches(',').to_owned());
    }
    let rest = rest?;
    let rest = rest
        .strip_suffix(" instead")
        .unwrap_or(&rest)
        .trim()
        .to_owned();
    let rest_normalized = normalize(&rest);
    if rest_normalized.is_empty() || is_stop(&rest_normalized) {
        Some((OverrideKind::Stop, None))
    } else {
        Some((OverrideKind::Redirect, Some(rest)))
    }
}

fn is_nudge(text: &str) -> bool {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.chars().all(|character| character == '?') {
        return true;
    }
    NUDGES.contains(&normalize(text).as_str())
}

fn is_filler(text: &str) -> bool {
    FILLERS.contains(&normalize(text).as_str())
}

/// The answer `text` gives to a question expecting `expected`, if it fits.
#[must_use]
pub fn fit(expected: &ExpectedType, text: &str, today: CivilDate) -> Option<TypedAnswer> {
    let normalized = normalize(text);
    if normalized.is_empty() {
        return None;
    }
    match expected {
        ExpectedType::YesNo => {
            if YES.contains(&normalized.as_str()) {
                Some(TypedAnswer::YesNo(true))
            } else if NO.contains(&normalized.as_str()) {
                Some(TypedAnswer::YesNo(false))
            } else {
                None
            }
        }
        ExpectedType::Number => parse_number(&normalized).map(TypedAnswer::Number),
        ExpectedType::Date => {
            parse_date(&normalized, today).map(|date| TypedAnswer::Date(date.to_string()))
        }
        ExpectedType::OneOf { options } => options
            .iter()
            .find(|option| normalize(option) == normalized)
            .or_else(|| {
                normalized
                    .parse::<usize>()
                    .ok()
                    .and_then(|position| position.checked_sub(1))
                    .and_then(|index| options.get(index))
            })
            .map(|option| TypedAnswer::Option(option.clone())),
        ExpectedType::FreeText => Some(TypedAnswer::Text(text.trim().to_owned())),
    }
}

fn parse_number(text: &str) -> Option<f64> {
    const WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    if let Some(position) = WORDS.iter().position(|word| *word == text) {
        return u32::try_from(position).ok().map(f64::from);
    }
    text.replace(',', "")
        .parse::<f64>()
        .ok()
        .filter(|number| number.is_finite())
}

fn parse_date(text: &str, today: CivilDate) -> Option<CivilDate> {
    match text {
        "today" => Some(today),
        "tomorrow" => Some(today.add_days(1)),
        "yesterday" => Some(today.add_days(-1)),
        other => CivilDate::parse(other),
    }
}

/// The most recently updated thread matching `keep`.
fn latest(threads: &[Thread], keep: impl Fn(&Thread) -> bool) -> Option<&Thread> {
    threads
        .iter()
        .filter(|thread| keep(thread))
        .max_by_key(|thread| (thread.updated_at_ms, thread.created_at_ms))
}

/// The thread an override or filler refers to: the most recent running one, else the most
/// recent unfinished one.
fn active(threads: &[Thread]) -> Option<ThreadId> {
    latest(threads, |thread| thread.status == ThreadStatus::InProgress)
        .or_else(|| latest(threads, |thread| !thread.status.is_terminal()))
        .map(|thread| thread.id)
}

/// Routes one turn. `threads` are the session's threads (any order), `today` dates "tomorrow".
#[must_use]
pub fn route(text: &str, threads: &[Thread], today: CivilDate) -> Route {
    if let Some((kind, rest)) = detect_override(text) {
        return Route::Override {
            kind,
            thread: active(threads),
            rest,
        };
    }
    let mut asked: Vec<&Thread> = threads
        .iter()
        .filter(|thread| thread.pending_question.is_some() && !thread.status.is_terminal())
        .collect();
    asked.sort_by_key(|thread| {
        std::cmp::Reverse(
            thread
                .pending_question
                .as_ref()
                .map_or(0, |question| question.asked_at_ms),
        )
    });
    for thread in &asked {
        if let Some(question) = &thread.pending_question {
            if question.expected != ExpectedType::FreeText {
                if let Some(answer) = fit(&question.expected, text, today) {
                    return Route::Answer {
                        thread: thread.id,
                        answer,
                    };
                }
            }
        }
    }
    if is_nudge(text) {
        let thread = latest(threads, |thread| {
            matches!(
                thread.status,
                ThreadStatus::InProgress | ThreadStatus::Blocked
            )
        })
        .or_else(|| latest(threads, |_| true))
        .map(|thread| thread.id);
        return Route::StatusNudge { thread };
    }
    if is_filler(text) {
        return Route::Filler {
            thread: active(threads),
        };
    }
    for thread in &asked {
        if let Some(question) = &thread.pending_question {
            if question.expected == ExpectedType::FreeText {
                if let Some(answer) = fit(&question.expected, text, today) {
                    return Route::Answer {
                        thread: thread.id,
                        answer,
                    };
                }
            }
        }
    }
    Route::NewRequest {
        text: text.trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;
    use crate::chat::{threads::PendingQuestion, SessionId};

    const TODAY: CivilDate = CivilDate {
        year: 2026,
        month: 11,
        day: 23,
    };

    fn thread(status: ThreadStatus, updated_at_ms: i64, expected: Option<ExpectedType>) -> Thread {
        Thread {
            id: ThreadId::new(),
            session_id: SessionId::new(),
            intent: "test".into(),
            slots: Map::new(),
            status,
            pending_question: expected.map(|expected| PendingQuestion {
                key: "answer".into(),
                expected,
                prompt: "?".into(),
                confirmation_id: None,
                asked_at_ms: updated_at_ms,
            }),
            summary: String::new(),
            created_at_ms: 0,
            updated_at_ms,
        }
    }

    /// One thread, waiting for an answer of the `expected` type.
    fn asking(expected: ExpectedType) -> Vec<Thread> {
        vec![thread(ThreadStatus::WaitingForUser, 3, Some(expected))]
    }

    /// The named expectation of one routing case.
    #[derive(Debug, PartialEq)]
    enum Expect {
        Stop(Option<usize>),
        Redirect(Option<usize>, String),
        Answer(usize, TypedAnswer),
        Nudge(Option<usize>),
        New,
        Filler(Option<usize>),
    }

    fn classify(route: Route, threads: &[Thread]) -> Expect {
        let position = |id: Option<ThreadId>| {
            id.and_then(|id| threads.iter().position(|thread| thread.id == id))
        };
        match route {
            Route::Override {
                kind: OverrideKind::Stop,
                thread,
                ..
            } => Expect::Stop(position(thread)),
            Route::Override {
                kind: OverrideKind::Redirect,
                thread,
                rest,
            } => Expect::Redirect(position(thread), rest.unwrap_or_default()),
            Route::Answer { thread, answer } => {
                Expect::Answer(position(Some(thread)).unwrap_or(99), answer)
            }
            Route::StatusNudge { thread } => Expect::Nudge(position(thread)),
            Route::NewRequest { .. } => Expect::New,
            Route::Filler { thread } => Expect::Filler(position(thread)),
        }
    }

    /// The routing rules of the deterministic-orchestration design, one row each.
    #[test]
    fn turns_are_routed_by_the_priority_rules() {
        let confirm_pending = || {
            vec![thread(
                ThreadStatus::WorkflowProposed,
                10,
                Some(ExpectedType::YesNo),
            )]
        };
        // Thread 0 is running; thread 1 (more recent) waits on a yes/no question.
        let running_and_asking = || {
            vec![
                thread(ThreadStatus::InProgress, 5, None),
                thread(ThreadStatus::WaitingForUser, 9, Some(ExpectedType::YesNo)),
            ]
        };
        let options = ExpectedType::OneOf {
            options: vec!["Low".into(), "Medium".into(), "High".into()],
        };
        let cases: Vec<(&str, Vec<Thread>, &str, Expect)> = vec![
            (
                "stop beats a pending question",
                confirm_pending(),
                "stop",
                Expect::Stop(Some(0)),
            ),
            (
                "actually, stop beats a pending question",
                confirm_pending(),
                "Actually, stop.",
                Expect::Stop(Some(0)),
            ),
            (
                "cancel is an override, not a no",
                confirm_pending(),
                "cancel",
                Expect::Stop(Some(0)),
            ),
            (
                "ignore that stops",
                running_and_asking(),
                "ignore that",
                Expect::Stop(Some(0)),
            ),
            (
                "actually … redirects",
                running_and_asking(),
                "actually, show open items",
                Expect::Redirect(Some(0), "show open items".into()),
            ),
            (
                "… instead redirects",
                running_and_asking(),
                "show open items instead",
                Expect::Redirect(Some(0), "show open items".into()),
            ),
            (
                "stop the update stops",
                running_and_asking(),
                "stop the update",
                Expect::Stop(Some(0)),
            ),
            (
                "yes answers a yes/no question",
                confirm_pending(),
                "yes",
                Expect::Answer(0, TypedAnswer::YesNo(true)),
            ),
            (
                "go ahead answers yes",
                confirm_pending(),
                "Go ahead!",
                Expect::Answer(0, TypedAnswer::YesNo(true)),
            ),
            (
                "no answers a yes/no question",
                confirm_pending(),
                "no",
                Expect::Answer(0, TypedAnswer::YesNo(false)),
            ),
            (
                "ok is filler, never an approval",
                confirm_pending(),
                "ok",
                Expect::Filler(Some(0)),
            ),
            (
                "a request does not fit yes/no",
                confirm_pending(),
                "show completed items",
                Expect::New,
            ),
            (
                "any luck attaches to the running thread, not the asking one",
                running_and_asking(),
                "any luck?",
                Expect::Nudge(Some(0)),
            ),
            (
                "a bare question mark is a nudge",
                running_and_asking(),
                "?",
                Expect::Nudge(Some(0)),
            ),
            (
                "update? is a nudge",
                running_and_asking(),
                "update?",
                Expect::Nudge(Some(0)),
            ),
            (
                "a nudge with nothing running goes to the latest thread",
                confirm_pending(),
                "any luck?",
                Expect::Nudge(Some(0)),
            ),
            (
                "a nudge with no threads has no thread",
                vec![],
                "any luck?",
                Expect::Nudge(None),
            ),
            (
                "thanks is filler",
                running_and_asking(),
                "thanks",
                Expect::Filler(Some(0)),
            ),
            (
                "a number fits a number question",
                asking(ExpectedType::Number),
                "42",
                Expect::Answer(0, TypedAnswer::Number(42.0)),
            ),
            (
                "a word number fits",
                asking(ExpectedType::Number),
                "three",
                Expect::Answer(0, TypedAnswer::Number(3.0)),
            ),
            (
                "text does not fit a number question",
                asking(ExpectedType::Number),
                "show items",
                Expect::New,
            ),
            (
                "a date fits a date question",
                asking(ExpectedType::Date),
                "2026-12-01",
                Expect::Answer(0, TypedAnswer::Date("2026-12-01".into())),
            ),
            (
                "tomorrow fits a date question",
                asking(ExpectedType::Date),
                "tomorrow",
                Expect::Answer(0, TypedAnswer::Date("2026-11-24".into())),
            ),
            (
                "an impossible date does not fit",
                asking(ExpectedType::Date),
                "2026-02-30",
                Expect::New,
            ),
            (
                "an option fits by name",
                asking(options.clone()),
                "high",
                Expect::Answer(0, TypedAnswer::Option("High".into())),
            ),
            (
                "an option fits by position",
                asking(options.clone()),
                "2",
                Expect::Answer(0, TypedAnswer::Option("Medium".into())),
            ),
            (
                "a non-option does not fit",
                asking(options),
                "urgent",
                Expect::New,
            ),
            (
                "free text takes a request-like answer",
                asking(ExpectedType::FreeText),
                "Buy milk",
                Expect::Answer(0, TypedAnswer::Text("Buy milk".into())),
            ),
            (
                "free text never swallows a nudge",
                vec![
                    thread(ThreadStatus::InProgress, 4, None),
                    thread(
                        ThreadStatus::WaitingForUser,
                        3,
                        Some(ExpectedType::FreeText),
                    ),
                ],
                "any luck?",
                Expect::Nudge(Some(0)),
            ),
            (
                "free text never swallows a stop",
                asking(ExpectedType::FreeText),
                "stop",
                Expect::Stop(Some(0)),
            ),
            (
                "a finished thread's question is not pending",
                vec![thread(ThreadStatus::Done, 3, Some(ExpectedType::YesNo))],
                "yes",
                Expect::New,
            ),
            (
                "a new request with no threads",
                vec![],
                "delete all completed items from last month",
                Expect::New,
            ),
            (
                "the most recent fitting question wins",
                vec![
                    thread(ThreadStatus::WaitingForUser, 3, Some(ExpectedType::YesNo)),
                    thread(ThreadStatus::WaitingForUser, 8, Some(ExpectedType::YesNo)),
                ],
                "yes",
                Expect::Answer(1, TypedAnswer::YesNo(true)),
            ),
        ];
        for (rule, threads, text, expected) in cases {
            let routed = route(text, &threads, TODAY);
            assert_eq!(classify(routed, &threads), expected, "{rule}: `{text}`");
        }
    }

    #[test]
    fn words_inside_requests_are_not_overrides() {
        for text in [
            "show items where status is open",
            "mark all open items as done",
            "show stopped items?",
        ] {
            assert!(detect_override(text).is_none(), "{text}");
        }
    }
}
