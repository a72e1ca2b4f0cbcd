//! Reading the request's words: which cues it holds (a chart, totals, top N, a grouping) and
//! whether its first action destroys something.

use super::{DEFAULT_TOP, MAX_TOP};

/// Words that ask for a chart.
const CHART_WORDS: &[&str] = &[
    "chart",
    "charts",
    "graph",
    "graphs",
    "plot",
    "trend",
    "trends",
    "histogram",
    "daily",
    "hourly",
    "visualise",
    "visualize",
];
/// Words that ask for a line rather than bars.
const LINE_WORDS: &[&str] = &["trend", "trends", "line", "timeline"];
/// Time units that, after "per" or "by", ask for a chart over that unit.
pub(super) const TIME_UNITS: &[&str] = &[
    "day", "days", "date", "week", "weeks", "month", "months", "hour", "hours", "year", "years",
    "quarter", "weekday",
];
/// Words that ask for totals.
const TOTAL_WORDS: &[&str] = &[
    "total",
    "totals",
    "sum",
    "sums",
    "count",
    "counts",
    "tally",
    "dashboard",
    "kpi",
    "kpis",
];
/// Words that rank rows.
const TOP_WORDS: &[&str] = &["top", "largest", "biggest", "highest", "best"];
/// Column names that hold the number a person cares about, best first.
pub(super) const VALUE_WORDS: &[&str] = &[
    "amount", "total", "revenue", "sales", "value", "price", "cost", "spend", "spent", "quantity",
    "qty", "units", "count", "hours", "score", "minutes", "duration", "points",
];
/// Column names that label a point in time.
pub(super) const TIME_WORDS: &[&str] = &[
    "day", "date", "week", "month", "year", "hour", "period", "time", "weekday", "when",
];
/// Verbs whose action cannot be taken back, or takes something away from someone.
pub(super) const DESTRUCTIVE_VERBS: &[&str] = &[
    "delete",
    "remove",
    "discard",
    "purge",
    "erase",
    "destroy",
    "wipe",
    "deactivate",
    "disable",
    "suspend",
    "reject",
    "decline",
    "revoke",
    "ban",
    "block",
    "terminate",
    "deny",
    "cancel",
    "drop",
    "close",
    "unpublish",
    "offboard",
];
/// Verbs that name a constructive action; the first action verb of the request decides.
pub(super) const CONSTRUCTIVE_VERBS: &[&str] = &[
    "approve", "accept", "archive", "book", "send", "save", "update", "create", "register", "sign",
    "schedule", "request", "order", "pay", "apply", "assign", "publish", "share", "invite", "vote",
    "rate", "submit", "add", "confirm", "choose", "select", "pick", "grant", "allow", "restore",
    "onboard", "plan", "refund", "merge", "deploy", "triage", "fill", "enter",
];

/// Number words a request may use after "top".
const NUMBER_WORDS: &[(&str, usize)] = &[
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("twelve", 12),
    ("fifteen", 15),
    ("twenty", 20),
];

/// A chart the request asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ChartCue {
    /// A trend: a line rather than bars.
    pub line: bool,
    /// The word after "per"/"by", when the request names what each point is.
    pub per: Option<String>,
}

/// A ranking the request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TopCue {
    /// How many rows.
    pub count: usize,
    /// The words after the number: what is ranked ("products").
    pub subject: Vec<String>,
}

/// Everything the request's words ask to see.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Cues {
    /// A chart of a numeric series.
    pub chart: Option<ChartCue>,
    /// Stat cards with counts and totals.
    pub totals: bool,
    /// A sorted, limited table.
    pub top: Option<TopCue>,
    /// The column word rows are grouped by.
    pub group_by: Option<String>,
}

/// The lower-case words of free text, keeping digits; apostrophes end a word ("week's" → "week").
pub(super) fn prompt_words(text: &str) -> Vec<String> {
    text.split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Singular and plural forms of `word`, for matching request words against keys.
pub(super) fn forms(word: &str) -> Vec<String> {
    let mut all = vec![word.to_owned()];
    if let Some(stem) = word.strip_suffix("ies") {
        all.push(format!("{stem}y"));
    } else if let Some(stem) = word.strip_suffix('s') {
        if !stem.is_empty() {
            all.push(stem.to_owned());
        }
    }
    if let Some(stem) = word.strip_suffix('y') {
        all.push(format!("{stem}ies"));
    }
    all.push(format!("{word}s"));
    all
}

pub(super) fn same_word(left: &str, right: &str) -> bool {
    forms(left).iter().any(|form| form == right)
}

/// Reads the cues of `prompt`.
pub(super) fn read(prompt: &str) -> Cues {
    let words = prompt_words(prompt);
    let has = |list: &[&str]| words.iter().any(|word| list.contains(&word.as_str()));
    let after = |index: usize| words.get(index + 1).map(String::as_str);
    let mut cues = Cues {
        totals: has(TOTAL_WORDS)
            || words
                .windows(2)
                .any(|pair| pair[0] == "how" && matches!(pair[1].as_str(), "many" | "much")),
        ..Cues::default()
    };

    let per_time = words.iter().enumerate().find_map(|(index, word)| {
        let next = after(index)?;
        (matches!(word.as_str(), "per" | "each" | "by") && TIME_UNITS.contains(&next))
            .then(|| next.to_owned())
    });
    let over_time = words
        .windows(2)
        .any(|pair| pair[0] == "over" && pair[1] == "time");
    if has(CHART_WORDS) || per_time.is_some() || over_time {
        let per = per_time.or_else(|| {
            words.iter().enumerate().find_map(|(index, word)| {
                (word == "per").then(|| after(index).map(str::to_owned))?
            })
        });
        cues.chart = Some(ChartCue {
            line: has(LINE_WORDS) || over_time,
            per,
        });
    }

    cues.top = words.iter().enumerate().find_map(|(index, word)| {
        if !TOP_WORDS.contains(&word.as_str()) {
            return None;
        }
        let number = |candidate: &String| {
            candidate.parse::<usize>().ok().or_else(|| {
                NUMBER_WORDS
                    .iter()
                    .find(|(name, _)| name == candidate)
                    .map(|(_, value)| *value)
            })
        };
        let mut next = index + 1;
        let after_word = words.get(next).and_then(number);
        if after_word.is_some() {
            next += 1;
        }
        // "the ten largest invoices" names the number first.
        let count = after_word.or_else(|| {
            index
                .checked_sub(1)
                .and_then(|before| words.get(before))
                .and_then(number)
        });
        let subject: Vec<String> = words.iter().skip(next).take(3).cloned().collect();
        // "best" alone is too common ("best regards") to rank anything without a number.
        (count.is_some() || word != "best").then(|| TopCue {
            count: count.unwrap_or(DEFAULT_TOP).clamp(1, MAX_TOP),
            subject,
        })
    });

    cues.group_by = words.iter().enumerate().find_map(|(index, word)| {
        let grouping = matches!(
            word.as_str(),
            "group" | "grouped" | "groups" | "breakdown" | "broken" | "break" | "split"
        );
        if !grouping {
            return None;
        }
        let by = words
            .iter()
            .skip(index + 1)
            .take(4)
            .position(|candidate| candidate == "by" || candidate == "per")?;
        words.get(index + 2 + by).cloned()
    });
    cues
}

/// The label and danger variant of the submit button when the request's first action verb is
/// destructive ("Deactivate", "Reject"); `None` when it is not, or names no action.
pub(in crate::agent::heuristic) fn destructive_action(heading: &str) -> Option<String> {
    let first_action = prompt_words(heading).into_iter().find(|word| {
        DESTRUCTIVE_VERBS.contains(&word.as_str()) || CONSTRUCTIVE_VERBS.contains(&word.as_str())
    })?;
    if !DESTRUCTIVE_VERBS.contains(&first_action.as_str()) {
        return None;
    }
    let mut characters = first_action.chars();
    characters
        .next()
        .map(|initial| initial.to_uppercase().chain(characters).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_words_and_per_day_ask_for_a_chart_and_trend_for_a_line() {
        let cues =
            read("Show this week's sales dashboard: totals, a chart per day, and top products");
        assert_eq!(
            cues.chart,
            Some(ChartCue {
                line: false,
                per: Some("day".to_owned())
            })
        );
        assert!(read("Revenue per month, please").chart.is_some());
        assert!(read("How did signups trend over time?")
            .chart
            .is_some_and(|chart| chart.line));
        assert_eq!(read("Review the expense report").chart, None);
    }

    #[test]
    fn total_sum_count_and_dashboard_ask_for_totals() {
        assert!(read("What is the total spend?").totals);
        assert!(read("How many tickets are open").totals);
        assert!(read("The support dashboard").totals);
        assert!(!read("Approve the refund").totals);
    }

    #[test]
    fn top_n_reads_the_number_and_the_subject() {
        let cues = read("List the top 3 customers by revenue");
        assert_eq!(
            cues.top,
            Some(TopCue {
                count: 3,
                subject: vec!["customers".into(), "by".into(), "revenue".into()]
            })
        );
        assert_eq!(
            read("top products").top.map(|top| top.count),
            Some(DEFAULT_TOP)
        );
        assert_eq!(
            read("the ten largest invoices").top.map(|top| top.count),
            Some(10)
        );
        assert_eq!(
            read("largest ten invoices").top.map(|top| top.count),
            Some(10)
        );
        assert_eq!(read("top 900 rows").top.map(|top| top.count), Some(MAX_TOP));
        assert_eq!(read("Best regards, Ana").top, None);
    }

    #[test]
    fn group_by_names_the_column_word() {
        assert_eq!(
            read("Expenses grouped by category").group_by.as_deref(),
            Some("category")
        );
        assert_eq!(
            read("break the hours down by project").group_by.as_deref(),
            Some("project")
        );
        assert_eq!(read("Sort by date").group_by, None);
    }

    #[test]
    fn the_first_action_verb_decides_whether_the_button_is_dangerous() {
        assert_eq!(
            destructive_action("Deactivate dormant accounts").as_deref(),
            Some("Deactivate")
        );
        assert_eq!(
            destructive_action("Review and reject the flagged applications").as_deref(),
            Some("Reject")
        );
        assert_eq!(destructive_action("Approve or reject these refunds"), None);
        assert_eq!(destructive_action("Schedule a meeting"), None);
        assert_eq!(destructive_action("Weekly digest"), None);
    }

    #[test]
    fn words_keep_digits_and_drop_apostrophes() {
        assert_eq!(
            prompt_words("This week's top-5, €12"),
            ["this", "week", "s", "top", "5", "12"]
        );
    }
}
