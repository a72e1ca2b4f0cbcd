//! Computed bindings: a `{"$data": "/rows", …}` binding with operations that code applies to the
//! bound array at render time — a total, a count, a per-group total, a sort and a limit.
//!
//! A page that shows "Total revenue" or "Top 5 products" must show numbers computed from the data
//! it is rendered with, never numbers a model wrote down: a stored page is re-rendered with newer
//! data, and the page cache reuses one tree for every snapshot of the same shape. So the tree says
//! *what* to compute and this module computes it, deterministically, from whatever data is bound.
//!
//! The operations, applied in this order:
//! - `"$groupBy": "key"`: one row per distinct value of `key` (first-seen order), holding `key`
//!   and either the `$sum` column's total or a `count`;
//! - `"$sortBy": "key"` with `"$order": "asc" | "desc"` (default `asc`): numbers numerically,
//!   other values as case-insensitive text, empty cells last; a stable sort;
//! - `"$limit": n`: the first `n` rows;
//! - `"$sum": "key"` (without `$groupBy`): the total of the column, numbers and numeric strings;
//! - `"$count": true`: the number of rows.
//!
//! An object with `$data` and any key not listed here is not a binding at all (it stays literal),
//! so a typo cannot silently compute something else. This module only produces JSON values.

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use super::{value_text, DATA_KEY};

/// Sums a column, or with `$groupBy` names the column that holds each group's total.
pub const SUM_KEY: &str = "$sum";
/// `true`: the number of rows.
pub const COUNT_KEY: &str = "$count";
/// Groups rows by a column's value.
pub const GROUP_KEY: &str = "$groupBy";
/// Sorts rows by a column.
pub const SORT_KEY: &str = "$sortBy";
/// `asc` (default) or `desc`, for `$sortBy`.
pub const ORDER_KEY: &str = "$order";
/// Keeps the first rows.
pub const LIMIT_KEY: &str = "$limit";

/// The key of each group's count when `$groupBy` has no `$sum`.
pub const COUNT_COLUMN: &str = "count";

/// A parsed computed binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Computed<'a> {
    /// The bound array's pointer.
    pub pointer: &'a str,
    group_by: Option<&'a str>,
    sum: Option<&'a str>,
    count: bool,
    sort_by: Option<&'a str>,
    descending: bool,
    limit: Option<usize>,
}

impl<'a> Computed<'a> {
    /// Reads a computed binding: `$data` plus at least one operation, and nothing else.
    #[must_use]
    pub fn parse(value: &'a Value) -> Option<Self> {
        let Value::Object(map) = value else {
            return None;
        };
        let pointer = map.get(DATA_KEY)?.as_str()?;
        if map.len() < 2 {
            return None;
        }
        let mut computed = Self {
            pointer,
            group_by: None,
            sum: None,
            count: false,
            sort_by: None,
            descending: false,
            limit: None,
        };
        for (key, value) in map {
            match key.as_str() {
                DATA_KEY => {}
                SUM_KEY => computed.sum = Some(value.as_str()?),
                GROUP_KEY => computed.group_by = Some(value.as_str()?),
                SORT_KEY => computed.sort_by = Some(value.as_str()?),
                COUNT_KEY => computed.count = value.as_bool()?,
                ORDER_KEY => {
                    computed.descending = match value.as_str()? {
                        "desc" => true,
                        "asc" => false,
                        _ => return None,
                    }
                }
                LIMIT_KEY => computed.limit = Some(usize::try_from(value.as_u64()?).ok()?),
                _ => return None,
            }
        }
        Some(computed)
    }

    /// The computed value over `source` (the value at the pointer; `None` when nothing is there).
    /// Operations on something that is not an array give `null`.
    #[must_use]
    pub fn apply(&self, source: Option<&Value>) -> Value {
        let Some(Value::Array(rows)) = source else {
            return Value::Null;
        };
        let mut rows: Vec<Value> = match self.group_by {
            Some(group_key) => group(rows, group_key, self.sum),
            None => rows.clone(),
        };
        if let Some(sort_key) = self.sort_by {
            rows.sort_by(|left, right| {
                let ordering = compare(left.get(sort_key), right.get(sort_key), self.descending);
                ordering
            });
        }
        if let Some(limit) = self.limit {
            rows.truncate(limit);
        }
        if self.count {
            return Value::from(rows.len());
        }
        match (self.sum, self.group_by) {
            (Some(sum_key), None) => total(rows.iter().map(|row| row.get(sum_key))),
            _ => Value::Array(rows),
        }
    }
}

/// A number from a cell: JSON numbers and numeric strings (`"1,204.50"` too).
fn cell_number(cell: Option<&Value>) -> Option<f64> {
    match cell? {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().replace(',', "").parse().ok(),
        _ => None,
    }
    .filter(|number: &f64| number.is_finite())
}

/// The sum of the numeric cells: a whole number when every cell is whole, else a number rounded
/// to six decimals so float noise (`0.1 + 0.2`) never reaches the page.
fn total<'v>(cells: impl Iterator<Item = Option<&'v Value>>) -> Value {
    let mut sum = 0.0_f64;
    let mut whole = 0_i64;
    let mut all_whole = true;
    for cell in cells {
        if let Some(Value::Number(number)) = cell {
            if let Some(integer) = number.as_i64() {
                whole = whole.saturating_add(integer);
                sum += integer as f64;
                continue;
            }
        }
        if let Some(number) = cell_number(cell) {
            all_whole = false;
            sum += number;
        }
    }
    if all_whole {
        return Value::from(whole);
    }
    let rounded = (sum * 1e6).round() / 1e6;
    Number::from_f64(rounded).map_or(Value::Null, Value::Number)
}

fn group(rows: &[Value], group_key: &str, sum: Option<&str>) -> Vec<Value> {
    let mut order: Vec<(String, Value)> = Vec::new();
    let mut members: Vec<Vec<&Value>> = Vec::new();
    for row in rows {
        let cell = row.get(group_key).cloned().unwrap_or(Value::Null);
        let text = value_text(&cell);
        match order.iter().position(|(seen, _)| *seen == text) {
            Some(index) => members[index].push(row),
            None => {
                order.push((text, cell));
                members.push(vec![row]);
            }
        }
    }
    order
        .into_iter()
        .zip(members)
        .map(|((_, cell), rows)| {
            let mut object = Map::new();
            object.insert(group_key.to_owned(), cell);
            match sum {
                Some(sum_key) => {
                    object.insert(
                        sum_key.to_owned(),
                        total(rows.iter().map(|row| row.get(sum_key))),
                    );
                }
                None => {
                    object.insert(COUNT_COLUMN.to_owned(), Value::from(rows.len()));
                }
            }
            Value::Object(object)
        })
        .collect()
}

/// Numbers before text, text case-insensitively, empty cells last whatever the direction.
fn compare(left: Option<&Value>, right: Option<&Value>, descending: bool) -> Ordering {
    let empty = |cell: Option<&Value>| cell.is_none_or(|value| value.is_null() || value == "");
    match (empty(left), empty(right)) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        (false, false) => {}
    }
    let ordering = match (cell_number(left), cell_number(right)) {
        (Some(left), Some(right)) => left.partial_cmp(&right).unwrap_or(Ordering::Equal),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => {
            let text =
                |cell: Option<&Value>| cell.map(value_text).unwrap_or_default().to_lowercase();
            text(left).cmp(&text(right))
        }
    };
    if descending {
        ordering.reverse()
    } else {
        ordering
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::binding::{resolve_props, unresolved_bindings};

    fn data() -> Value {
        json!({"sales": [
            {"day": "Mon", "product": "Tea", "amount": 12.5},
            {"day": "Mon", "product": "Cake", "amount": 30},
            {"day": "Tue", "product": "Tea", "amount": "7.25"},
            {"day": "Wed", "product": "Soup", "amount": null},
            {"day": "Wed", "product": "Cake", "amount": 0.1},
        ], "counts": [1, 2, 3], "title": "Week"})
    }

    #[test]
    fn a_sum_adds_numbers_and_numeric_strings_and_skips_empty_cells() {
        let props = json!({"value": {"$data": "/sales", "$sum": "amount"}});
        assert_eq!(resolve_props(&props, &data()), json!({"value": 49.85}));
    }

    #[test]
    fn a_sum_of_whole_numbers_stays_whole() {
        let data = json!({"rows": [{"n": 2}, {"n": 40}]});
        let props = json!({"$data": "/rows", "$sum": "n"});
        assert_eq!(resolve_props(&props, &data), json!(42));
    }

    #[test]
    fn a_count_is_the_number_of_rows() {
        let props = json!({"$data": "/sales", "$count": true});
        assert_eq!(resolve_props(&props, &data()), json!(5));
        let props = json!({"$data": "/counts", "$count": true});
        assert_eq!(resolve_props(&props, &data()), json!(3));
    }

    #[test]
    fn group_by_totals_each_group_in_first_seen_order() {
        let props = json!({"$data": "/sales", "$groupBy": "day", "$sum": "amount"});
        assert_eq!(
            resolve_props(&props, &data()),
            json!([{"day": "Mon", "amount": 42.5}, {"day": "Tue", "amount": 7.25}, {"day": "Wed", "amount": 0.1}])
        );
        let props = json!({"$data": "/sales", "$groupBy": "product"});
        assert_eq!(
            resolve_props(&props, &data()),
            json!([{"product": "Tea", "count": 2}, {"product": "Cake", "count": 2}, {"product": "Soup", "count": 1}])
        );
    }

    #[test]
    fn top_n_sorts_descending_with_empty_cells_last_and_keeps_n_rows() {
        let props = json!({"$data": "/sales", "$sortBy": "amount", "$order": "desc", "$limit": 3});
        let top = resolve_props(&props, &data());
        let products: Vec<&str> = top
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|row| row["product"].as_str())
            .collect();
        assert_eq!(products, ["Cake", "Tea", "Tea"]);
        let props = json!({"$data": "/sales", "$sortBy": "amount", "$limit": 5});
        let ascending = resolve_props(&props, &data());
        assert_eq!(ascending[0]["amount"], json!(0.1));
        assert_eq!(
            ascending[4]["product"],
            json!("Soup"),
            "empty cells sort last"
        );
    }

    #[test]
    fn grouped_totals_can_be_ranked() {
        let props = json!({"$data": "/sales", "$groupBy": "product", "$sum": "amount",
                           "$sortBy": "amount", "$order": "desc", "$limit": 1});
        assert_eq!(
            resolve_props(&props, &data()),
            json!([{"product": "Cake", "amount": 30.1}])
        );
    }

    #[test]
    fn unknown_operations_leave_the_object_literal_and_missing_arrays_compute_null() {
        let typo = json!({"$data": "/sales", "$summ": "amount"});
        assert_eq!(resolve_props(&typo, &data()), typo);
        let props = json!({"$data": "/title", "$count": true});
        assert_eq!(resolve_props(&props, &data()), Value::Null);
        let missing = json!({"value": {"$data": "/nothing", "$sum": "amount"}});
        assert_eq!(
            unresolved_bindings(&missing, &data()),
            vec!["value: /nothing".to_owned()]
        );
    }
}
