//! Page data held fixed while a tree is built, with what each node's props were found to be
//! against it.
//!
//! Checking a node resolves its bindings as the renderer does (the rows of a by-reference prop,
//! such as a Table's `{"$data": "/emails"}`, are read where they are and never copied),
//! validates the resolved props and reads the fields they submit. Those results depend only on
//! the component, the props and the data, so while the data stays the same a node need not be
//! worked out twice: every edit of the agent loop re-checks field names against all placed
//! fields, and `ValidateForm` walks every node again. [`BoundData`] remembers each node's
//! [`NodeFacts`] by component and props; an edit then works out only the node it touches.
//!
//! A [`BoundData`] must not outlive the data it was made for: it borrows it, so it cannot.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::binding::{resolve_props_leaving_arrays, unresolved_bindings, BoundProps};
use crate::catalog::{ComponentSpec, FieldInfo};

/// What one node's props are against the page data.
#[derive(Debug)]
pub struct NodeFacts {
    /// The bindings that point nowhere, as [`unresolved_bindings`] lists them.
    pub unresolved: Vec<String>,
    /// The props with every binding resolved as the renderer resolves them: by-reference rows
    /// ([`crate::catalog::ComponentProps::BY_REFERENCE`]) are left an empty array.
    pub resolved: Value,
    /// The component's own check of the resolved props.
    pub valid: Result<(), String>,
    /// What the node submits (empty for components that submit nothing or invalid props).
    pub fields: Vec<FieldInfo>,
}

/// Page data with the facts of every node checked against it so far.
pub struct BoundData<'a> {
    data: &'a Value,
    /// By the spec (its validator's address, so a custom spec of the same name is another key),
    /// its name and the props as JSON text.
    facts: RefCell<HashMap<(usize, String, String), Arc<NodeFacts>>>,
}

impl fmt::Debug for BoundData<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("BoundData")
            .field("nodes_known", &self.facts.borrow().len())
            .finish_non_exhaustive()
    }
}

impl Clone for BoundData<'_> {
    fn clone(&self) -> Self {
        Self {
            data: self.data,
            facts: RefCell::new(self.facts.borrow().clone()),
        }
    }
}

impl<'a> BoundData<'a> {
    /// Nothing known yet about nodes over `data`.
    #[must_use]
    pub fn new(data: &'a Value) -> Self {
        Self {
            data,
            facts: RefCell::new(HashMap::new()),
        }
    }

    /// The page data.
    #[must_use]
    pub fn data(&self) -> &'a Value {
        self.data
    }

    /// The facts of a node of `spec` with `props`, worked out on first asking.
    #[must_use]
    pub fn facts(&self, spec: &ComponentSpec, props: &Value) -> Arc<NodeFacts> {
        let key = (
            Arc::as_ptr(&spec.check).cast::<()>() as usize,
            spec.name.clone(),
            props.to_string(),
        );
        if let Some(known) = self.facts.borrow().get(&key) {
            return Arc::clone(known);
        }
        let resolved = resolve_props_leaving_arrays(props, self.data, spec.by_reference);
        let checked = (spec.check)(
            &resolved,
            &BoundProps {
                props,
                data: self.data,
            },
        );
        let facts = Arc::new(NodeFacts {
            unresolved: unresolved_bindings(props, self.data),
            valid: checked.valid,
            fields: checked.fields,
            resolved,
        });
        self.facts.borrow_mut().insert(key, Arc::clone(&facts));
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use serde_json::json;

    #[test]
    fn a_node_is_worked_out_once_and_other_props_anew() {
        let catalog = Catalog::defaults();
        let Some(table) = catalog.get("Table") else {
            panic!("the default catalog has a Table");
        };
        let data = json!({"emails": [{"id": "m1"}, {"id": "m2"}]});
        let bound = BoundData::new(&data);
        let props = json!({"rows": {"$data": "/emails"},
                           "selectable": {"name": "ids", "idKey": "id", "label": "Emails"}});
        let first = bound.facts(table, &props);
        assert!(Arc::ptr_eq(&first, &bound.facts(table, &props)));
        // The rows are read where they are, not copied into the props.
        assert_eq!(first.resolved["rows"], json!([]));
        assert_eq!(
            first.fields[0].options.as_deref(),
            Some(&["m1".to_owned(), "m2".to_owned()][..])
        );
        let elsewhere = json!({"rows": {"$data": "/nowhere"}});
        let other = bound.facts(table, &elsewhere);
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(other.unresolved, vec!["rows: /nowhere".to_owned()]);
    }
}
