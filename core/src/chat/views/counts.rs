//! Reading the counts a generated tree states, so a view that names another count than code's
//! is refused (the heuristic then builds it).

use serde_json::Value;
use tessera_app::tree::PageTree;

/// Refuses a tree that states a count of `nouns` other than `count` in its literal text, or shows
/// a literal number in a `Stat` or `ProgressBar` (those must be bound to code's facts).
///
/// # Errors
/// The reason, naming the node.
pub fn check_counts(tree: &PageTree, count: usize, nouns: &[String]) -> Result<(), String> {
    for (id, node) in &tree.nodes {
        if matches!(node.component.as_str(), "Stat" | "ProgressBar") {
            for key in ["value", "max"] {
                if node.props.get(key).is_some_and(Value::is_number) {
                    return Err(format!(
                        "`{id}` shows a literal number; numbers must be bound to the data"
                    ));
                }
            }
        }
        if node.component == "Button" {
            // Code writes every button label itself.
            continue;
        }
        let mut texts = Vec::new();
        collect_strings(&node.props, &mut texts);
        for text in texts {
            if let Some(stated) = stated_counts(&text, nouns)
                .into_iter()
                .find(|stated| *stated != count)
            {
                return Err(format!("`{id}` says {stated} where code counts {count}"));
            }
        }
    }
    Ok(())
}

pub(super) fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(map) => map
            .iter()
            .filter(|(key, _)| key.as_str() != "$data")
            .for_each(|(_, item)| collect_strings(item, out)),
        _ => {}
    }
}

/// Words that may stand between a count and its noun ("12 completed items", "all 3 open
/// items") without changing what is counted; any other word breaks the link.
pub(super) const COUNT_GAP_WORDS: usize = 2;

/// Every count of `nouns` (singular or plural) that `text` states: a number (in digits, or a
/// word from one to twenty) followed by the noun within [`COUNT_GAP_WORDS`] words, or the noun
/// followed by a colon-style number ("Items: 4").
pub(super) fn stated_counts(text: &str, nouns: &[String]) -> Vec<usize> {
    let words: Vec<String> = text
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    let is_noun = |word: &str| {
        let singular = word.strip_suffix('s').unwrap_or(word);
        nouns.iter().any(|candidate| {
            candidate.to_lowercase() == singular || candidate.to_lowercase() == word
        })
    };
    let mut counts = Vec::new();
    for (position, word) in words.iter().enumerate() {
        let Some(number) = number_word(word) else {
            continue;
        };
        let after = words.iter().skip(position + 1).take(COUNT_GAP_WORDS + 1);
        let before = position.checked_sub(1).and_then(|index| words.get(index));
        let counts_a_noun = after
            .take_while(|next| number_word(next).is_none())
            .any(|next| is_noun(next))
            || before.is_some_and(|previous| is_noun(previous));
        if counts_a_noun {
            counts.push(number);
        }
    }
    counts
}

/// A count written in digits, or as a word from one to twenty.
pub(super) fn number_word(word: &str) -> Option<usize> {
    const WORDS: [&str; 20] = [
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    word.parse::<usize>().ok().or_else(|| {
        WORDS
            .iter()
            .position(|candidate| *candidate == word)
            .map(|index| index + 1)
    })
}

// ---------------------------------------------------------------------------------------------
// Progress

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_count_is_read_where_it_counts_the_noun() {
        let nouns = ["item".to_owned()];
        let counts = |text: &str| stated_counts(text, &nouns);
        assert_eq!(counts("You are deleting 12 items."), [12]);
        assert_eq!(counts("1 item will go"), [1]);
        assert_eq!(counts("You are about to delete 999 completed items"), [999]);
        assert_eq!(counts("all 7 old completed items"), [7]);
        assert_eq!(counts("Items: 4"), [4]);
        assert_eq!(counts("Delete twelve items"), [12]);
        assert_eq!(counts("3 items now, 5 items later"), [3, 5]);
        assert!(counts("Sent in 3 requests").is_empty());
        assert!(counts("Review the 3 rows, then the items").is_empty());
        assert!(
            counts("Items from 12 March").is_empty(),
            "a date is not a count"
        );
    }

    #[test]
    fn a_confirm_tree_stating_another_count_anywhere_is_refused() -> anyhow::Result<()> {
        let nouns = ["item".to_owned()];
        let tree: PageTree = serde_json::from_value(json!({
            "nodes": {"t": {"component": "Text", "props": {"text": "This removes 40 completed items for good."}}},
            "order": ["t"]
        }))?;
        let refused = check_counts(&tree, 3, &nouns);
        assert_eq!(refused, Err("`t` says 40 where code counts 3".to_owned()));
        assert_eq!(check_counts(&tree, 40, &nouns), Ok(()));
        Ok(())
    }
}
