//! The render budget: how much one page may cost, so no tree and data make the server work without end.
//!
//! A page tree is small, but it points into data: twenty Tables bound to one array of two
//! thousand rows, or a text repeating `{{/big}}` ten thousand times, turn a few kilobytes of
//! request into gigabytes of markup. [`RenderBudget`] caps what one [`render_tree`] call may
//! spend — nodes rendered, table rows written, bytes of resolved props and table rows — and the
//! renderer charges a [`Meter`] as it goes, stopping at the first overrun: the rest of the page
//! is not rendered and an [`OverBudget`] names the limit. [`RenderBudget::check_tree`] makes the
//! same count without rendering (without resolving anything), for the preview's `ValidateForm`,
//! which resolves every node's props.
//!
//! A document rendered under a [`BudgetWatch`] learns of an overrun in any tree it holds, so the
//! HTTP edge answers an error instead of a page cut short.
//!
//! [`render_tree`]: super::render_tree

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::binding::{binding_pointer, computed::Computed, lookup, placeholders};
use crate::catalog::Catalog;
use crate::tree::PageTree;

/// How much one page may cost to render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderBudget {
    /// Nodes rendered.
    pub nodes: usize,
    /// Table rows written, every Table and `DecisionTable` of the page together.
    pub rows: usize,
    /// Bytes of resolved props and of table rows written.
    pub bytes: usize,
}

impl RenderBudget {
    /// The budget every page gets unless its caller says otherwise: far above any page the
    /// demos, tests and models make (a few hundred nodes, tables paged at 50 rows, a chat
    /// confirmation of 500 rows), far below what hurts a server.
    pub const DEFAULT: Self = Self {
        nodes: 2_000,
        rows: 5_000,
        bytes: 8 * 1024 * 1024,
    };

    /// Counts what rendering `tree` over `data` would cost in nodes and resolved-props bytes,
    /// without resolving anything; table rows are left to the renderer, which pages them.
    ///
    /// # Errors
    /// The first limit the tree goes over.
    pub fn check_tree(
        &self,
        tree: &PageTree,
        data: &Value,
        catalog: &Catalog,
    ) -> Result<(), OverBudget> {
        let meter = Meter::new(*self);
        for node in tree.nodes.values() {
            if !meter.charge(BudgetLimit::Nodes, 1) {
                break;
            }
            let by_reference = catalog
                .get(&node.component)
                .map_or(&[][..], |spec| spec.by_reference);
            let remaining = meter.remaining_bytes();
            if !meter.charge(
                BudgetLimit::Bytes,
                resolved_size(&node.props, data, by_reference, remaining),
            ) {
                break;
            }
        }
        meter.over().map_or(Ok(()), Err)
    }
}

impl Default for RenderBudget {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One of the budget's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetLimit {
    /// [`RenderBudget::nodes`].
    Nodes,
    /// [`RenderBudget::rows`].
    Rows,
    /// [`RenderBudget::bytes`].
    Bytes,
}

impl BudgetLimit {
    /// The limit's name, as error bodies give it (`nodes`, `rows`, `bytes`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Nodes => "nodes",
            Self::Rows => "rows",
            Self::Bytes => "bytes",
        }
    }

    fn of(self, budget: &RenderBudget) -> usize {
        match self {
            Self::Nodes => budget.nodes,
            Self::Rows => budget.rows,
            Self::Bytes => budget.bytes,
        }
    }
}

/// A page that costs more than its budget allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverBudget {
    /// The limit it went over.
    pub limit: BudgetLimit,
    /// What that limit allows.
    pub allowed: usize,
}

impl OverBudget {
    fn what(self) -> &'static str {
        match self.limit {
            BudgetLimit::Nodes => "components",
            BudgetLimit::Rows => "table rows",
            BudgetLimit::Bytes => "bytes of text and table rows",
        }
    }

    /// What the person who opened the page is told: no advice on props they cannot change, but
    /// the limit by name, so whoever they pass it on to can find it.
    #[must_use]
    pub fn for_the_person(self) -> String {
        format!(
            "It holds more than {} {}, more than one page may show (render budget “{}”). \
             Ask whoever sent you the link for a smaller page.",
            self.allowed,
            self.what(),
            self.limit.name()
        )
    }
}

impl fmt::Display for OverBudget {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = self.what();
        write!(
            formatter,
            "the page is too large to show: it needs more than {} {what} (render budget `{}`); \
             page tables with `pageSize` or bind fewer copies of the data",
            self.allowed,
            self.limit.name()
        )
    }
}

impl std::error::Error for OverBudget {}

/// What one render has spent so far against its budget; the first overrun sticks.
#[derive(Debug)]
pub struct Meter {
    budget: RenderBudget,
    nodes: AtomicUsize,
    rows: AtomicUsize,
    bytes: AtomicUsize,
    over: OnceLock<OverBudget>,
}

impl Meter {
    /// A meter with nothing spent.
    #[must_use]
    pub fn new(budget: RenderBudget) -> Self {
        Self {
            budget,
            nodes: AtomicUsize::new(0),
            rows: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
            over: OnceLock::new(),
        }
    }

    /// Spends `amount` of `limit`; `false` when that goes over (or something already did), and
    /// the work should stop.
    pub fn charge(&self, limit: BudgetLimit, amount: usize) -> bool {
        if self.is_over() {
            return false;
        }
        let counter = match limit {
            BudgetLimit::Nodes => &self.nodes,
            BudgetLimit::Rows => &self.rows,
            BudgetLimit::Bytes => &self.bytes,
        };
        let allowed = limit.of(&self.budget);
        let spent = counter
            .fetch_add(amount, Ordering::Relaxed)
            .saturating_add(amount);
        if spent > allowed {
            let _ = self.over.set(OverBudget { limit, allowed });
            return false;
        }
        true
    }

    /// Whether a limit was gone over.
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.over.get().is_some()
    }

    /// The first overrun, if any.
    #[must_use]
    pub fn over(&self) -> Option<OverBudget> {
        self.over.get().copied()
    }

    /// Bytes still allowed (one more than that means over).
    #[must_use]
    pub fn remaining_bytes(&self) -> usize {
        self.budget
            .bytes
            .saturating_sub(self.bytes.load(Ordering::Relaxed))
    }
}

/// Collects the first overrun of any tree rendered under the reactive owner it was provided in,
/// so whoever renders a whole document can refuse it.
#[derive(Clone, Debug, Default)]
pub struct BudgetWatch(Arc<OnceLock<OverBudget>>);

impl BudgetWatch {
    /// A watch, provided as context to everything rendered under the current owner from now on.
    #[must_use]
    pub fn provide() -> Self {
        let watch = Self::default();
        leptos::prelude::provide_context(watch.clone());
        watch
    }

    /// Records an overrun (the first one is kept).
    pub fn record(&self, over: OverBudget) {
        let _ = self.0.set(over);
    }

    /// The first overrun recorded, if any.
    #[must_use]
    pub fn overrun(&self) -> Option<OverBudget> {
        self.0.get().copied()
    }
}

/// About how many bytes `props` take once their bindings are resolved against `data`, by-reference
/// array props left out (the renderer reads those rows where they are). Stops counting once past
/// `limit`, so the count itself costs at most about `limit` plus the props' own size.
#[must_use]
pub fn resolved_size(props: &Value, data: &Value, by_reference: &[&str], limit: usize) -> usize {
    if let (Value::Object(map), false) = (props, is_binding(props)) {
        let mut size = 0_usize;
        for (key, value) in map {
            if size > limit {
                break;
            }
            let rows_by_reference = by_reference.contains(&key.as_str())
                && binding_pointer(value)
                    .and_then(|pointer| lookup(data, pointer))
                    .is_some_and(Value::is_array);
            size = size.saturating_add(key.len());
            if !rows_by_reference {
                size =
                    size.saturating_add(resolved_value_size(value, data, limit - size.min(limit)));
            }
        }
        return size;
    }
    resolved_value_size(props, data, limit)
}

fn is_binding(value: &Value) -> bool {
    binding_pointer(value).is_some() || Computed::parse(value).is_some()
}

fn resolved_value_size(value: &Value, data: &Value, limit: usize) -> usize {
    if let Some(pointer) = binding_pointer(value) {
        return lookup(data, pointer).map_or(0, |target| value_size(target, limit));
    }
    if let Some(computed) = Computed::parse(value) {
        // A computed binding copies its source array at most once before reducing it.
        return lookup(data, computed.pointer).map_or(0, |target| value_size(target, limit));
    }
    match value {
        Value::String(text) => {
            let mut size = text.len();
            for pointer in placeholders(text) {
                if size > limit {
                    break;
                }
                let remaining = limit - size;
                size = size.saturating_add(
                    lookup(data, pointer).map_or(0, |target| value_size(target, remaining)),
                );
            }
            size
        }
        Value::Array(items) => container_size(array_entries(items), limit, |item, remaining| {
            resolved_value_size(item, data, remaining)
        }),
        Value::Object(map) => container_size(object_entries(map), limit, |item, remaining| {
            resolved_value_size(item, data, remaining)
        }),
        other => value_size(other, limit),
    }
}

/// About how many bytes `value` takes as text, counted only until past `limit`.
#[must_use]
pub fn value_size(value: &Value, limit: usize) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(text) => text.len() + 2,
        Value::Array(items) => container_size(array_entries(items), limit, value_size),
        Value::Object(map) => container_size(object_entries(map), limit, value_size),
    }
}

/// An array's items, each with what it adds as text besides itself (a comma).
fn array_entries(items: &[Value]) -> impl Iterator<Item = (usize, &Value)> {
    items.iter().map(|item| (1, item))
}

/// An object's values, each with what it adds as text besides itself (its quoted key, a colon
/// and a comma).
fn object_entries(map: &serde_json::Map<String, Value>) -> impl Iterator<Item = (usize, &Value)> {
    map.iter().map(|(key, item)| (key.len() + 4, item))
}

/// About how many bytes an array or object takes as text, its `entries` measured with
/// `item_size` against what is left of `limit`, counted only until past `limit`.
fn container_size<'v>(
    entries: impl Iterator<Item = (usize, &'v Value)>,
    limit: usize,
    item_size: impl Fn(&Value, usize) -> usize,
) -> usize {
    let mut size = 2_usize;
    for (overhead, item) in entries {
        if size > limit {
            break;
        }
        size = size.saturating_add(overhead + item_size(item, limit - size));
    }
    size
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_meter_stops_at_the_first_limit_gone_over_and_keeps_it() {
        let meter = Meter::new(RenderBudget {
            nodes: 2,
            rows: 10,
            bytes: 100,
        });
        assert!(meter.charge(BudgetLimit::Nodes, 2));
        assert!(!meter.charge(BudgetLimit::Nodes, 1));
        assert!(!meter.charge(BudgetLimit::Rows, 1));
        assert_eq!(
            meter.over(),
            Some(OverBudget {
                limit: BudgetLimit::Nodes,
                allowed: 2
            })
        );
    }

    #[test]
    fn placeholders_repeating_big_data_count_every_copy_but_stop_past_the_limit() {
        let data = json!({"big": "x".repeat(1_000)});
        let props = json!({"text": "{{/big}}".repeat(1_000)});
        let size = resolved_size(&props, &data, &[], 50_000);
        assert!(size > 50_000, "{size}");
        assert!(
            size < 60_000,
            "counting should stop soon after the limit: {size}"
        );
    }

    #[test]
    fn rows_read_by_reference_cost_nothing_but_copies_do() {
        let data = json!({"rows": (0..100).map(|n| json!({"n": n})).collect::<Vec<_>>()});
        let props = json!({"rows": {"$data": "/rows"}});
        assert!(resolved_size(&props, &data, &["rows"], usize::MAX) < 20);
        assert!(resolved_size(&props, &data, &[], usize::MAX) > 1_000);
    }
}
