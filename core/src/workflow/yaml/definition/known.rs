//! What the state may hold when a step runs, for checking templates and pointers.

use std::collections::HashSet;

use serde_json::Value;

use crate::{forms::FormSchema, util::templates, workflow::yaml::pointer};

use super::{parse::check_syntax, LoadError};

/// What the state may hold when a step runs: the initial state, plus what earlier steps save.
pub(super) struct Known {
    initial: Value,
    /// Pointers an earlier step sets (a saved answer and each of its fields).
    exact: HashSet<String>,
    /// Pointers under which anything may be (an HTTP response's body).
    opaque: Vec<String>,
}

/// Names a template may use that the state does not provide.
const TEMPLATE_GLOBALS: [&str; 5] = ["range", "dict", "debug", "loop", "none"];

impl Known {
    pub(super) fn new(initial: &serde_json::Map<String, Value>) -> Self {
        Self {
            initial: Value::Object(initial.clone()),
            exact: HashSet::new(),
            opaque: Vec::new(),
        }
    }

    pub(super) fn saved(&mut self, save: Option<&str>, schema: Option<&FormSchema>) {
        let base = save.unwrap_or("");
        if !base.is_empty() {
            self.exact.insert(base.to_owned());
        }
        match schema {
            Some(schema) => {
                for field in &schema.fields {
                    self.exact.insert(format!("{base}/{}", field.name));
                }
            }
            None if !base.is_empty() => self.opaque.push(base.to_owned()),
            None => {}
        }
    }

    pub(super) fn saved_opaque(&mut self, save: Option<&str>) {
        if let Some(save) = save {
            self.opaque.push(save.to_owned());
        }
    }

    pub(super) fn has(&self, pointer: &str) -> bool {
        self.initial.pointer(pointer).is_some()
            || self.exact.contains(pointer)
            || self
                .opaque
                .iter()
                .any(|base| pointer == base || pointer.starts_with(&format!("{base}/")))
    }

    fn roots(&self) -> HashSet<String> {
        let mut roots: HashSet<String> = self
            .initial
            .as_object()
            .map(|map| map.keys().cloned().collect())
            .unwrap_or_default();
        for pointer in self.exact.iter().chain(&self.opaque) {
            if let Some(first) =
                pointer::tokens(pointer).and_then(|tokens| tokens.into_iter().next())
            {
                roots.insert(first);
            }
        }
        roots
    }

    pub(super) fn read(
        &self,
        pointer: &str,
        field: &str,
        fail: &dyn Fn(&str, String) -> LoadError,
    ) -> Result<(), LoadError> {
        check_syntax(pointer, field, fail)?;
        if self.has(pointer) {
            return Ok(());
        }
        Err(fail(
            field,
            format!(
                "unknown pointer `{pointer}`: neither the initial `state` nor an earlier step's `save` puts anything there"
            ),
        ))
    }

    pub(super) fn template(
        &self,
        source: &str,
        field: &str,
        fail: &dyn Fn(&str, String) -> LoadError,
    ) -> Result<(), LoadError> {
        let environment = templates::environment();
        let template = templates::compile(&environment, source)
            .map_err(|problem| fail(field, format!("the template does not parse: {problem}")))?;
        let roots = self.roots();
        let mut unknown: Vec<String> = template
            .undeclared_variables(false)
            .into_iter()
            .filter(|name| !roots.contains(name) && !TEMPLATE_GLOBALS.contains(&name.as_str()))
            .collect();
        unknown.sort();
        if let Some(name) = unknown.first() {
            return Err(fail(
                field,
                format!(
                    "the template uses `{name}`, which neither the initial `state` nor an earlier step's `save` provides"
                ),
            ));
        }
        Ok(())
    }
}
