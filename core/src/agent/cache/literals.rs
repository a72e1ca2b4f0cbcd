//! Stale literal text in a cached tree: what a reused page may still say about the request it
//! was built for, and how a hit is re-bound to (or refused for) the new one.
//!
//! The cache key leaves values out, so a hit serves a tree built for other values. Bound props
//! (`{"$data": …}`, computed bindings, `{{/pointer}}` placeholders) follow the new data by
//! themselves; *literal* text does not. A model (or the heuristic, whose heading is the rendered
//! prompt's first sentence) may have copied into it a value the old request held: a count
//! interpolated into the prompt ("Present these 12 emails"), a name from a row, a total it
//! computed. A person must never see the previous request's values, so:
//!
//! 1. **When a page is stored** its [`Provenance`] is recorded: the rendered prompt, and for every
//!    word or number of its literal text that was a *value* of that request — interpolated into
//!    the prompt (a token of the rendered prompt that the template source does not contain), a
//!    data value (with the data's pointer pattern, array indices as `*`), an array's length —
//!    where it came from. A number in literal text that is none of those and not in the template
//!    or schema was computed by the model and is marked unverifiable. Words of the template
//!    source and the schema are the request's fixed text and never count as values.
//! 2. **On a hit**, text copied from the old prompt is re-bound ([`rebind_prompt_text`]): the old
//!    and new rendered prompts are aligned token by token, and each changed run ("12" → "5") is
//!    replaced in literal text where it occurs between the same neighbouring words.
//! 3. **Then [`stale_values`]** lists every recorded value still in the literal text that the new
//!    request does not hold in the same role (interpolated into the new prompt, found at the same
//!    data pattern, an array of that length there). Any such value, or any unverifiable number,
//!    makes the hit stale: the generation falls through to the model and records why.
//!
//! The rule errs towards running the model: a literal value that merely coincides with a value of
//! the new request in the same role is kept (it is that request's value too), and everything
//! else that came from the old values is refused.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;
use serde_json::Value;
use tessera_app::{
    binding::{binding_pointer, computed::Computed},
    tree::PageTree,
};

pub use tessera_store::records::page_cache::{Origin, Provenance};

/// A value of the old request still in a hit's literal text that the new request does not hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StaleValue {
    /// The word or number, lower case.
    pub value: String,
    /// Where it came from in the old request.
    pub origins: Vec<Origin>,
}

/// The request text a hit shares with the stored page: same template (or prompt) and schema.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The template source, or the prompt itself when there is no template.
    pub source: &'a str,
    /// The rendered prompt.
    pub prompt: &'a str,
    /// The response schema as JSON text (`null` without one).
    pub schema: &'a str,
    /// The data.
    pub data: &'a Value,
}

impl Request<'_> {
    /// Lower-case tokens of the fixed text: template source and schema.
    fn fixed(&self) -> HashSet<String> {
        words(self.source).chain(words(self.schema)).collect()
    }

    /// Lower-case tokens interpolated into the rendered prompt.
    fn interpolated(&self, fixed: &HashSet<String>) -> HashSet<String> {
        words(self.prompt)
            .filter(|word| !fixed.contains(word))
            .collect()
    }
}

/// Records the values of `request` that `tree`'s literal text holds.
#[must_use]
pub fn provenance_of(tree: &PageTree, request: &Request<'_>) -> Provenance {
    let fixed = request.fixed();
    let interpolated = request.interpolated(&fixed);
    let literal = literal_tokens(tree);
    let sequences = literal_sequences(tree);
    let candidates: HashSet<&str> = literal
        .iter()
        .filter(|token| !fixed.contains(&token.word))
        .map(|token| token.word.as_str())
        .collect();
    let mut values: BTreeMap<String, BTreeSet<Origin>> = BTreeMap::new();
    for word in &candidates {
        if interpolated.contains(*word) {
            values
                .entry((*word).to_owned())
                .or_default()
                .insert(Origin::Prompt);
        }
    }
    walk_data(
        request.data,
        &mut String::new(),
        &mut |value_words, origin| {
            for word in copied_words(value_words, &sequences, |word| candidates.contains(word)) {
                values.entry(word.to_owned()).or_default().insert(origin());
            }
        },
    );
    for token in &literal {
        if token.in_text
            && !fixed.contains(&token.word)
            && is_number(&token.word)
            && !values.contains_key(&token.word)
        {
            values
                .entry(token.word.clone())
                .or_default()
                .insert(Origin::Unverifiable);
        }
    }
    Provenance {
        prompt: request.prompt.to_owned(),
        values,
    }
}

/// The recorded values still in `tree`'s literal text that `request` does not hold in the same
/// role; empty when the tree may be shown for `request`.
#[must_use]
pub fn stale_values(
    tree: &PageTree,
    provenance: &Provenance,
    request: &Request<'_>,
) -> Vec<StaleValue> {
    let present: BTreeSet<String> = literal_tokens(tree)
        .into_iter()
        .map(|token| token.word)
        .filter(|word| provenance.values.contains_key(word))
        .collect();
    if present.is_empty() {
        return Vec::new();
    }
    let fixed = request.fixed();
    let interpolated = request.interpolated(&fixed);
    let sequences = literal_sequences(tree);
    // Only the values at each recorded origin are read, and the first that still holds the word
    // ends the search: a hit over 100,000 rows reads a row, not every value of every row.
    let holds = |value: &Value, word: &str| match value {
        Value::String(text) => {
            let value_words: Vec<String> = words(text).collect();
            copied_words(&value_words, &sequences, |each| present.contains(each)).contains(&word)
        }
        Value::Number(number) => number.to_string() == word,
        _ => false,
    };
    present
        .iter()
        .cloned()
        .filter_map(|word| {
            let origins = &provenance.values[&word];
            let kept = origins.iter().any(|origin| match origin {
                Origin::Prompt => interpolated.contains(&word),
                Origin::Data(pattern) => {
                    any_at(request.data, pattern, &mut |value| holds(value, &word))
                }
                Origin::Length(pattern) => any_at(request.data, pattern, &mut |value| {
                    value
                        .as_array()
                        .is_some_and(|items| items.len().to_string() == word)
                }),
                Origin::Unverifiable => false,
            });
            (!kept).then(|| StaleValue {
                value: word,
                origins: origins.iter().cloned().collect(),
            })
        })
        .collect()
}

/// Replaces, in `tree`'s literal text, each run of the old prompt that differs in the new one,
/// where it stands between the same neighbouring words (or at an end of the text). Returns how
/// many replacements were made.
pub fn rebind_prompt_text(tree: &mut PageTree, old_prompt: &str, new_prompt: &str) -> usize {
    if old_prompt == new_prompt {
        return 0;
    }
    let changes = prompt_changes(old_prompt, new_prompt);
    if changes.is_empty() {
        return 0;
    }
    let mut replaced = 0;
    for node in tree.nodes.values_mut() {
        for_each_text_mut(&mut node.props, &mut |text| {
            for change in &changes {
                replaced += change.apply(text);
            }
        });
    }
    replaced
}

/// One differing run of tokens between the old and new prompt, with its neighbours in the old.
#[derive(Debug, PartialEq, Eq)]
struct Change {
    old: String,
    new: String,
    before: Option<String>,
    after: Option<String>,
}

impl Change {
    /// Replaces every occurrence of `old` in `text` that stands on word boundaries with matching
    /// neighbours (outside `{{/pointer}}` placeholders); returns how many.
    fn apply(&self, text: &mut String) -> usize {
        if self.old.is_empty() {
            return 0;
        }
        let mut pieces = Vec::new();
        let mut count = 0;
        for (piece, is_placeholder) in split_placeholders(text) {
            if is_placeholder {
                pieces.push(piece.to_owned());
            } else {
                let (rebound, made) = self.apply_to_piece(piece);
                count += made;
                pieces.push(rebound);
            }
        }
        if count > 0 {
            *text = pieces.concat();
        }
        count
    }

    fn apply_to_piece(&self, piece: &str) -> (String, usize) {
        let lower = piece.to_ascii_lowercase();
        let needle = self.old.to_ascii_lowercase();
        let mut out = String::with_capacity(piece.len());
        let mut cursor = 0;
        let mut count = 0;
        while let Some(found) = lower[cursor..].find(&needle) {
            let start = cursor + found;
            let end = start + needle.len();
            let fits = !piece[..start]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
                && !piece[end..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
                && neighbour_fits(last_word(&piece[..start]), self.before.as_deref())
                && neighbour_fits(first_word(&piece[end..]), self.after.as_deref());
            if fits {
                out.push_str(&piece[cursor..start]);
                out.push_str(&self.new);
                count += 1;
            } else {
                out.push_str(&piece[cursor..end]);
            }
            cursor = end;
        }
        out.push_str(&piece[cursor..]);
        (out, count)
    }
}

/// A neighbour in the literal text fits when it is the same word as in the prompt, or when the
/// literal text ends there (a heading cut from the prompt).
fn neighbour_fits(found: Option<&str>, expected: Option<&str>) -> bool {
    match (found, expected) {
        (None, _) => true,
        (Some(found), Some(expected)) => found.eq_ignore_ascii_case(expected),
        (Some(_), None) => false,
    }
}

/// The most tokens of a prompt aligned; longer prompts are compared only by their common prefix
/// and suffix, so a change in their middle is never re-bound (and the hit is judged stale).
const MAX_ALIGNED: usize = 4_000_000;

/// The differing runs between two prompts, by a longest-common-subsequence alignment of tokens.
fn prompt_changes(old: &str, new: &str) -> Vec<Change> {
    let old_tokens = spans(old);
    let new_tokens = spans(new);
    let same = |i: usize, j: usize| old_tokens[i].2 == new_tokens[j].2;
    let mut prefix = 0;
    while prefix < old_tokens.len() && prefix < new_tokens.len() && same(prefix, prefix) {
        prefix += 1;
    }
    let mut suffix = 0;
    while suffix < old_tokens.len() - prefix
        && suffix < new_tokens.len() - prefix
        && same(old_tokens.len() - 1 - suffix, new_tokens.len() - 1 - suffix)
    {
        suffix += 1;
    }
    let old_middle = prefix..old_tokens.len() - suffix;
    let new_middle = prefix..new_tokens.len() - suffix;
    let rows = old_middle.len();
    let columns = new_middle.len();
    // Matched pairs (old index, new index), in order.
    let mut matched: Vec<(usize, usize)> = (0..prefix).map(|index| (index, index)).collect();
    if rows.saturating_mul(columns) <= MAX_ALIGNED {
        // lengths[i][j]: LCS length of old_middle[i..] and new_middle[j..].
        let mut lengths = vec![0_u32; (rows + 1) * (columns + 1)];
        let at = |i: usize, j: usize| i * (columns + 1) + j;
        for i in (0..rows).rev() {
            for j in (0..columns).rev() {
                lengths[at(i, j)] = if same(old_middle.start + i, new_middle.start + j) {
                    lengths[at(i + 1, j + 1)] + 1
                } else {
                    lengths[at(i + 1, j)].max(lengths[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < rows && j < columns {
            if same(old_middle.start + i, new_middle.start + j) {
                matched.push((old_middle.start + i, new_middle.start + j));
                i += 1;
                j += 1;
            } else if lengths[at(i + 1, j)] >= lengths[at(i, j + 1)] {
                i += 1;
            } else {
                j += 1;
            }
        }
    }
    matched.extend((0..suffix).map(|back| {
        (
            old_tokens.len() - suffix + back,
            new_tokens.len() - suffix + back,
        )
    }));
    // Runs between consecutive matched pairs are the changes.
    let mut changes = Vec::new();
    let mut previous: Option<(usize, usize)> = None;
    for pair in matched
        .iter()
        .copied()
        .map(Some)
        .chain(std::iter::once(None))
    {
        let (old_from, new_from) = previous.map_or((0, 0), |(i, j)| (i + 1, j + 1));
        let (old_to, new_to) = pair.unwrap_or((old_tokens.len(), new_tokens.len()));
        if old_from < old_to {
            let text_of =
                |tokens: &[(usize, usize, String)], source: &str, from: usize, to: usize| {
                    if from < to {
                        source[tokens[from].0..tokens[to - 1].1].to_owned()
                    } else {
                        String::new()
                    }
                };
            changes.push(Change {
                old: text_of(&old_tokens, old, old_from, old_to),
                new: text_of(&new_tokens, new, new_from, new_to),
                before: old_from
                    .checked_sub(1)
                    .map(|index| old_tokens[index].2.clone()),
                after: old_tokens.get(old_to).map(|token| token.2.clone()),
            });
        }
        previous = pair;
    }
    changes
}

/// A token of literal text.
struct LiteralToken {
    word: String,
    /// In a string (not a JSON number prop).
    in_text: bool,
}

/// Every token of the tree's literal text: strings outside bindings and placeholders, and
/// numbers written as JSON numbers.
fn literal_tokens(tree: &PageTree) -> Vec<LiteralToken> {
    let mut tokens = Vec::new();
    for node in tree.nodes.values() {
        visit_literals(&node.props, &mut |value| match value {
            Value::String(text) => {
                for (piece, is_placeholder) in split_placeholders(text) {
                    if !is_placeholder {
                        tokens.extend(words(piece).map(|word| LiteralToken {
                            word,
                            in_text: true,
                        }));
                    }
                }
            }
            Value::Number(number) => tokens.push(LiteralToken {
                word: number.to_string().to_lowercase(),
                in_text: false,
            }),
            _ => {}
        });
    }
    tokens
}

fn is_binding(value: &Value) -> bool {
    binding_pointer(value).is_some() || Computed::parse(value).is_some()
}

/// Props whose numbers shape the component rather than show a value (a heading's level, a text
/// area's rows): a number there is never a copied value, however often it equals one.
const STRUCTURAL_KEYS: [&str; 14] = [
    "level",
    "rows",
    "maxRows",
    "maxItems",
    "pageSize",
    "minLength",
    "maxLength",
    "min",
    "step",
    "gap",
    "columns",
    "span",
    "minSelected",
    "maxSelected",
];

fn visit_literals(value: &Value, visit: &mut impl FnMut(&Value)) {
    if is_binding(value) {
        return;
    }
    match value {
        Value::Array(items) => items.iter().for_each(|item| visit_literals(item, visit)),
        Value::Object(map) => {
            for (key, item) in map {
                if !(item.is_number() && STRUCTURAL_KEYS.contains(&key.as_str())) {
                    visit_literals(item, visit);
                }
            }
        }
        other => visit(other),
    }
}

fn for_each_text_mut(value: &mut Value, visit: &mut impl FnMut(&mut String)) {
    if is_binding(value) {
        return;
    }
    match value {
        Value::String(text) => visit(text),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| for_each_text_mut(item, visit)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|item| for_each_text_mut(item, visit)),
        _ => {}
    }
}

/// Values of at most this many words are names, ids and labels: each of their words is a value
/// (a page saying "from Ada" copied part of "Ada Lovelace"). Longer values are prose, whose words
/// are everyday vocabulary: they count only when the whole value was copied.
const SHORT_VALUE_WORDS: usize = 3;

/// The words of a data value that the literal text copied: each word of a short value that
/// `wanted` accepts, or every word of a long value whose whole word sequence occurs in one piece
/// of literal text.
fn copied_words<'w>(
    value_words: &'w [String],
    sequences: &[Vec<String>],
    wanted: impl Fn(&str) -> bool,
) -> Vec<&'w str> {
    if value_words.len() <= SHORT_VALUE_WORDS {
        return value_words
            .iter()
            .map(String::as_str)
            .filter(|word| wanted(word))
            .collect();
    }
    if !value_words.iter().all(|word| wanted(word)) {
        return Vec::new();
    }
    let copied = sequences.iter().any(|sequence| {
        sequence
            .windows(value_words.len())
            .any(|window| window == value_words)
    });
    if copied {
        value_words.iter().map(String::as_str).collect()
    } else {
        Vec::new()
    }
}

/// The word sequence of each piece of literal text.
fn literal_sequences(tree: &PageTree) -> Vec<Vec<String>> {
    let mut sequences = Vec::new();
    for node in tree.nodes.values() {
        visit_literals(&node.props, &mut |value| {
            if let Value::String(text) = value {
                for (piece, is_placeholder) in split_placeholders(text) {
                    if !is_placeholder {
                        sequences.push(words(piece).collect());
                    }
                }
            }
        });
    }
    sequences
}

/// Walks the data's scalars, calling `found(words, origin)` with the words of each value (origin
/// `Data(pattern)`) and of each array's length (`Length(pattern)`). The origin is built lazily.
/// Whether any value of `data` at the pointer `pattern` (as [`walk_data`] writes them, array
/// indices `*`) satisfies `test`; stops at the first that does.
fn any_at(data: &Value, pattern: &str, test: &mut impl FnMut(&Value) -> bool) -> bool {
    let segments: Vec<String> = pattern
        .split('/')
        .skip(1)
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect();
    any_below(data, &segments, test)
}

fn any_below(value: &Value, segments: &[String], test: &mut impl FnMut(&Value) -> bool) -> bool {
    let Some((segment, rest)) = segments.split_first() else {
        return test(value);
    };
    match value {
        Value::Array(items) if segment == "*" => {
            items.iter().any(|item| any_below(item, rest, test))
        }
        Value::Object(map) => map
            .get(segment)
            .is_some_and(|child| any_below(child, rest, test)),
        _ => false,
    }
}

fn walk_data(
    value: &Value,
    pattern: &mut String,
    found: &mut impl FnMut(&[String], &dyn Fn() -> Origin),
) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let before = pattern.len();
                pattern.push('/');
                if key.contains(['~', '/']) {
                    pattern.push_str(&key.replace('~', "~0").replace('/', "~1"));
                } else {
                    pattern.push_str(key);
                }
                walk_data(child, pattern, found);
                pattern.truncate(before);
            }
        }
        Value::Array(items) => {
            let length = [items.len().to_string()];
            {
                let here: &str = pattern;
                found(&length, &|| Origin::Length(here.to_owned()));
            }
            let before = pattern.len();
            pattern.push_str("/*");
            for item in items {
                walk_data(item, pattern, found);
            }
            pattern.truncate(before);
        }
        Value::String(text) => {
            let value_words: Vec<String> = words(text).collect();
            let here: &str = pattern;
            found(&value_words, &|| Origin::Data(here.to_owned()));
        }
        Value::Number(number) => {
            let here: &str = pattern;
            // A number is one value however it is written ("12.5" is not "12" and "5").
            found(&[number.to_string()], &|| Origin::Data(here.to_owned()));
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// Splits `text` into literal pieces and `{{/pointer}}` placeholders (`true`).
fn split_placeholders(text: &str) -> Vec<(&str, bool)> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{/") {
        let Some(close) = rest[open..].find("}}") else {
            break;
        };
        if open > 0 {
            pieces.push((&rest[..open], false));
        }
        pieces.push((&rest[open..open + close + 2], true));
        rest = &rest[open + close + 2..];
    }
    if !rest.is_empty() {
        pieces.push((rest, false));
    }
    pieces
}

/// Token spans of `text`: (start, end, lower-case word), words being runs of letters and digits.
fn spans(text: &str) -> Vec<(usize, usize, String)> {
    let mut tokens = Vec::new();
    let mut start = None;
    for (index, character) in text.char_indices() {
        match (character.is_alphanumeric(), start) {
            (true, None) => start = Some(index),
            (false, Some(from)) => {
                tokens.push((from, index, text[from..index].to_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        tokens.push((from, text.len(), text[from..].to_lowercase()));
    }
    tokens
}

/// Lower-case words of `text`.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

fn first_word(text: &str) -> Option<&str> {
    let text = text.trim_start_matches(|character: char| !character.is_alphanumeric());
    let end = text
        .find(|character: char| !character.is_alphanumeric())
        .unwrap_or(text.len());
    (end > 0).then(|| &text[..end])
}

fn last_word(text: &str) -> Option<&str> {
    let text = text.trim_end_matches(|character: char| !character.is_alphanumeric());
    let start = text
        .rfind(|character: char| !character.is_alphanumeric())
        .map_or(0, |index| {
            index + text[index..].chars().next().map_or(1, char::len_utf8)
        });
    (start < text.len()).then(|| &text[start..])
}

fn is_number(word: &str) -> bool {
    word.chars().all(|character| character.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tree(nodes: &Value) -> PageTree {
        serde_json::from_value(json!({ "nodes": nodes })).unwrap_or_default()
    }

    fn text_of(tree: &PageTree, id: &str) -> String {
        tree.nodes[id].props["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    const TEMPLATE: &str =
        "Present these {{ emails | length }} emails from {{ sender }}; pick which to archive.";

    fn request<'a>(prompt: &'a str, data: &'a Value) -> Request<'a> {
        Request {
            source: TEMPLATE,
            prompt,
            schema: r#"{"properties":{"archive_ids":{"type":"array"}}}"#,
            data,
        }
    }

    #[test]
    fn a_count_copied_from_the_old_prompt_is_rebound_to_the_new_one() {
        let old_data = json!({"emails": [{"id": "a"}, {"id": "b"}], "sender": "Ada Lovelace"});
        let old_prompt = "Present these 2 emails from Ada Lovelace; pick which to archive.";
        let mut page = tree(&json!({
            "c1": {"component": "Heading", "props": {"text": "Present these 2 emails from Ada Lovelace"}},
            "c2": {"component": "Text", "props": {"text": "2 waiting"}},
        }));
        let provenance = provenance_of(&page, &request(old_prompt, &old_data));
        assert!(provenance.values["2"].contains(&Origin::Prompt));
        assert!(provenance.values["2"].contains(&Origin::Length("/emails".into())));
        assert!(provenance.values["ada"].contains(&Origin::Data("/sender".into())));

        let new_data =
            json!({"emails": [{"id": "c"}, {"id": "d"}, {"id": "e"}], "sender": "Grace Hopper"});
        let new_prompt = "Present these 3 emails from Grace Hopper; pick which to archive.";
        let replaced = rebind_prompt_text(&mut page, old_prompt, new_prompt);
        assert_eq!(replaced, 2, "{page:?}");
        assert_eq!(
            text_of(&page, "c1"),
            "Present these 3 emails from Grace Hopper"
        );
        // "2 waiting" is at the start of its text and followed by another word than the prompt's:
        // it is not re-bound, so it is stale.
        assert_eq!(text_of(&page, "c2"), "2 waiting");
        let stale = stale_values(&page, &provenance, &request(new_prompt, &new_data));
        assert_eq!(
            stale
                .iter()
                .map(|value| value.value.as_str())
                .collect::<Vec<_>>(),
            vec!["2"]
        );
    }

    #[test]
    fn a_value_under_escaped_keys_and_nested_rows_is_found_where_it_was_recorded() {
        let prompt = "Present these 1 emails from x; pick which to archive.";
        let page = tree(&json!({
            "c1": {"component": "Text", "props": {"text": "Mostly from Ada, 3 lists"}},
        }));
        let old_data = json!({"in/box": [{"~tags": [{"who": "Ada"}]}], "lists": [[1, 2, 3]]});
        let provenance = provenance_of(&page, &request(prompt, &old_data));
        assert_eq!(
            provenance.values["ada"],
            BTreeSet::from([Origin::Data("/in~1box/*/~0tags/*/who".into())])
        );
        assert!(provenance.values["3"].contains(&Origin::Length("/lists/*".into())));
        let kept = json!({"in/box": [{"~tags": []}, {"~tags": [{"who": "Bo"}, {"who": "Ada"}]}],
                          "lists": [[], [7, 8, 9]]});
        assert!(stale_values(&page, &provenance, &request(prompt, &kept)).is_empty());
        let elsewhere = json!({"in/box": [{"who": "Ada", "~tags": []}], "lists": [[1, 2]], "n": 3});
        let stale: Vec<String> = stale_values(&page, &provenance, &request(prompt, &elsewhere))
            .into_iter()
            .map(|value| value.value)
            .collect();
        assert_eq!(stale, vec!["3".to_owned(), "ada".to_owned()]);
    }

    #[test]
    fn a_name_copied_from_a_row_is_stale_unless_the_new_data_has_it_at_the_same_place() {
        let old_data = json!({"emails": [{"id": "a", "from": "Ada"}], "sender": "x"});
        let prompt = "Present these 1 emails from x; pick which to archive.";
        let page = tree(&json!({
            "c1": {"component": "Text", "props": {"text": "Mostly from Ada", "tone": {"$data": "/sender"}}},
        }));
        let provenance = provenance_of(&page, &request(prompt, &old_data));
        assert_eq!(
            provenance.values["ada"],
            BTreeSet::from([Origin::Data("/emails/*/from".into())])
        );
        let moved = json!({"emails": [{"id": "b", "from": "Bob"}], "sender": "Ada"});
        assert_eq!(
            stale_values(&page, &provenance, &request(prompt, &moved)).len(),
            1
        );
        let kept = json!({"emails": [{"id": "b", "from": "Bob"}, {"id": "c", "from": "Ada"}], "sender": "x"});
        assert!(stale_values(&page, &provenance, &request(prompt, &kept)).is_empty());
    }

    #[test]
    fn a_number_the_model_computed_is_never_reused_but_fixed_text_and_bindings_are() {
        let data =
            json!({"emails": [{"id": "a", "size": 10}, {"id": "b", "size": 20}], "sender": "x"});
        let prompt = "Present these 2 emails from x; pick which to archive.";
        let page = tree(&json!({
            "c1": {"component": "Text", "props": {"text": "Total size 30, see {{/emails/0/id}}"}},
            "c2": {"component": "Heading", "props": {"text": "Pick which to archive", "level": 2}},
            "c3": {"component": "Stat", "props": {"label": "Emails", "value": {"$data": "/emails", "$count": true}}},
        }));
        let provenance = provenance_of(&page, &request(prompt, &data));
        assert_eq!(
            provenance.values,
            BTreeMap::from([("30".to_owned(), BTreeSet::from([Origin::Unverifiable]))])
        );
        assert_eq!(
            stale_values(&page, &provenance, &request(prompt, &data)).len(),
            1
        );
        let clean = tree(
            &json!({"c2": {"component": "Heading", "props": {"text": "Pick which to archive", "level": 2}}}),
        );
        let provenance = provenance_of(&clean, &request(prompt, &data));
        assert!(provenance.values.is_empty(), "{provenance:?}");
    }

    #[test]
    fn a_value_at_the_start_of_a_heading_is_rebound_whatever_its_case() {
        let mut page = tree(
            &json!({"c1": {"component": "Heading", "props": {"text": "Ada asks for 3 approvals"}}}),
        );
        let replaced = rebind_prompt_text(
            &mut page,
            "ada asks for 3 approvals.",
            "bob asks for 12 approvals.",
        );
        assert_eq!(replaced, 2);
        assert_eq!(text_of(&page, "c1"), "bob asks for 12 approvals");
    }

    #[test]
    fn placeholders_are_left_alone_by_rebinding() {
        let mut page =
            tree(&json!({"c1": {"component": "Text", "props": {"text": "{{/rows/2/name}} 2"}}}));
        rebind_prompt_text(&mut page, "Show 2", "Show 5");
        assert_eq!(text_of(&page, "c1"), "{{/rows/2/name}} 5");
    }
}
