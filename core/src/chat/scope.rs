//! Capability scope: which operations a chat session may run, owned by the server.
//!
//! The server's allowlist is the authority. A scope requested by a client or proposed by a model
//! is a *request*: [`CapabilityScope::intersect`] keeps only what the allowlist also allows and
//! reports (for the log) what it stripped; it can narrow a session, never widen it. An empty
//! intersection is an empty scope — every call refused — never "no restriction". Every call is
//! checked with [`CapabilityScope::check`] before any policy or I/O, and a refusal carries a reason
//! a person can read.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::manifest::{Manifest, Operation};

pub use tessera_store::records::chat::scope::CapabilityScope;

/// A scope someone asked for: each part narrows when present.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RequestedScope {
    /// Only these operations.
    #[serde(default)]
    pub operations: Option<Vec<String>>,
    /// Only these entities.
    #[serde(default)]
    pub entities: Option<Vec<String>>,
}

/// What [`CapabilityScope::intersect`] removed from a request, for the log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stripped {
    /// Requested operations the allowlist does not have.
    pub operations: Vec<String>,
    /// Requested entities the allowlist does not have.
    pub entities: Vec<String>,
}

impl Stripped {
    /// Whether nothing was stripped.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty() && self.entities.is_empty()
    }
}

/// Why a call was refused by the scope.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScopeRefusal {
    /// The site has no such operation.
    #[error("`{0}` is not an operation of this site")]
    Unknown(String),
    /// The operation exists but this session may not use it.
    #[error("`{0}` is outside this session's capability scope")]
    NotAllowed(String),
    /// The operation acts on an entity this session may not touch.
    #[error("`{operation}` acts on `{entity}`, which this session may not touch")]
    EntityNotAllowed {
        /// The operation.
        operation: String,
        /// Its entity.
        entity: String,
    },
    /// The operation is not offered to the caller (a manual-only tool called by the model, or the
    /// reverse).
    #[error("`{0}` is not offered to {1}")]
    WrongCaller(String, &'static str),
    /// The request would go to a host outside the allowlist.
    #[error("`{operation}` would call host `{host}`, which this session may not reach")]
    HostNotAllowed {
        /// The operation.
        operation: String,
        /// The host.
        host: String,
    },
}

/// What a [`CapabilityScope`] allows, decided against a site's manifest (the scope is stored
/// with the session; the rules live here, with the manifest).
pub trait ScopeRules: Sized {
    /// Every operation of `manifest`, no constraints: the demo's server allowlist.
    #[must_use]
    fn all_of(manifest: &Manifest) -> Self;

    /// Only the readonly operations of `manifest`.
    #[must_use]
    fn read_only(manifest: &Manifest) -> Self;

    /// This scope narrowed by `requested`; what the request named beyond it is stripped and
    /// returned for the log.
    #[must_use]
    fn intersect(&self, requested: &RequestedScope) -> (Self, Stripped);

    /// Checks that this session may run `name`.
    ///
    /// # Errors
    /// The [`ScopeRefusal`] saying why not.
    fn check<'m>(&self, manifest: &'m Manifest, name: &str) -> Result<&'m Operation, ScopeRefusal>;

    /// Checks that `operation` may send a request to `host`.
    ///
    /// # Errors
    /// [`ScopeRefusal::HostNotAllowed`].
    fn check_host(&self, operation: &str, host: &str) -> Result<(), ScopeRefusal>;

    /// The operations in scope that the model may call, in manifest order.
    #[must_use]
    fn model_operations<'m>(&self, manifest: &'m Manifest) -> Vec<&'m Operation>;

    /// The operations in scope that a person may call by hand, in manifest order.
    #[must_use]
    fn manual_operations<'m>(&self, manifest: &'m Manifest) -> Vec<&'m Operation>;
}

impl ScopeRules for CapabilityScope {
    fn all_of(manifest: &Manifest) -> Self {
        Self {
            operations: manifest
                .operations()
                .iter()
                .map(|operation| operation.name.clone())
                .collect(),
            entities: None,
            hosts: None,
        }
    }

    fn read_only(manifest: &Manifest) -> Self {
        Self {
            operations: manifest
                .operations()
                .iter()
                .filter(|operation| !operation.is_mutating())
                .map(|operation| operation.name.clone())
                .collect(),
            entities: None,
            hosts: None,
        }
    }

    fn intersect(&self, requested: &RequestedScope) -> (Self, Stripped) {
        let mut scope = self.clone();
        let mut stripped = Stripped::default();
        if let Some(operations) = &requested.operations {
            let (kept, dropped): (Vec<&String>, Vec<&String>) = operations
                .iter()
                .partition(|operation| self.operations.contains(*operation));
            scope.operations = kept.into_iter().cloned().collect();
            stripped.operations = dropped.into_iter().cloned().collect();
        }
        if let Some(entities) = &requested.entities {
            let requested: BTreeSet<String> = entities.iter().cloned().collect();
            let (kept, dropped): (BTreeSet<String>, BTreeSet<String>) = match &self.entities {
                Some(allowed) => requested
                    .into_iter()
                    .partition(|entity| allowed.contains(entity)),
                None => (requested, BTreeSet::new()),
            };
            scope.entities = Some(kept);
            stripped.entities = dropped.into_iter().collect();
        }
        (scope, stripped)
    }

    fn check<'m>(&self, manifest: &'m Manifest, name: &str) -> Result<&'m Operation, ScopeRefusal> {
        let Some(operation) = manifest.operation(name) else {
            return Err(ScopeRefusal::Unknown(name.to_owned()));
        };
        if !self.operations.contains(name) {
            return Err(ScopeRefusal::NotAllowed(name.to_owned()));
        }
        if let Some(entities) = &self.entities {
            if !entities.contains(&operation.entity) {
                return Err(ScopeRefusal::EntityNotAllowed {
                    operation: name.to_owned(),
                    entity: operation.entity.clone(),
                });
            }
        }
        Ok(operation)
    }

    fn check_host(&self, operation: &str, host: &str) -> Result<(), ScopeRefusal> {
        match &self.hosts {
            Some(hosts) if !hosts.contains(host) => Err(ScopeRefusal::HostNotAllowed {
                operation: operation.to_owned(),
                host: host.to_owned(),
            }),
            _ => Ok(()),
        }
    }

    fn model_operations<'m>(&self, manifest: &'m Manifest) -> Vec<&'m Operation> {
        manifest
            .operations()
            .iter()
            .filter(|operation| {
                operation.offered_to_model() && self.check(manifest, &operation.name).is_ok()
            })
            .collect()
    }

    fn manual_operations<'m>(&self, manifest: &'m Manifest) -> Vec<&'m Operation> {
        manifest
            .operations()
            .iter()
            .filter(|operation| {
                operation.offered_manually() && self.check(manifest, &operation.name).is_ok()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo() -> Result<Manifest, super::super::manifest::ManifestError> {
        Manifest::from_json(crate::demo::items::MANIFEST_JSON)
    }

    #[test]
    fn a_requested_scope_is_intersected_never_trusted() -> Result<(), Box<dyn std::error::Error>> {
        let manifest = demo()?;
        let server = CapabilityScope::read_only(&manifest);
        let (scope, stripped) = server.intersect(&RequestedScope {
            operations: Some(vec![
                "searchItems".into(),
                "bulkDeleteItems".into(),
                "sudo".into(),
            ]),
            entities: None,
        });
        assert_eq!(scope.operations, BTreeSet::from(["searchItems".to_owned()]));
        assert_eq!(
            stripped.operations,
            vec!["bulkDeleteItems".to_owned(), "sudo".to_owned()]
        );
        assert!(scope.check(&manifest, "searchItems").is_ok());
        assert_eq!(
            scope.check(&manifest, "bulkDeleteItems").err(),
            Some(ScopeRefusal::NotAllowed("bulkDeleteItems".into()))
        );
        assert_eq!(
            scope.check(&manifest, "sudo").err(),
            Some(ScopeRefusal::Unknown("sudo".into()))
        );
        Ok(())
    }

    #[test]
    fn an_empty_intersection_allows_nothing() -> Result<(), Box<dyn std::error::Error>> {
        let manifest = demo()?;
        let (scope, stripped) = CapabilityScope::read_only(&manifest).intersect(&RequestedScope {
            operations: Some(vec!["bulkDeleteItems".into()]),
            entities: None,
        });
        assert!(scope.operations.is_empty());
        assert!(!stripped.is_empty());
        assert!(scope.model_operations(&manifest).is_empty());
        Ok(())
    }

    #[test]
    fn entity_and_host_constraints_refuse_with_a_reason() -> Result<(), Box<dyn std::error::Error>>
    {
        let manifest = demo()?;
        let (scope, _) = CapabilityScope::all_of(&manifest).intersect(&RequestedScope {
            operations: None,
            entities: Some(vec!["invoices".into()]),
        });
        assert_eq!(
            scope
                .check(&manifest, "searchItems")
                .err()
                .map(|refusal| refusal.to_string()),
            Some("`searchItems` acts on `items`, which this session may not touch".to_owned())
        );
        let hosts = CapabilityScope {
            hosts: Some(BTreeSet::from(["127.0.0.1".to_owned()])),
            ..CapabilityScope::all_of(&manifest)
        };
        assert!(hosts.check_host("searchItems", "127.0.0.1").is_ok());
        assert!(hosts.check_host("searchItems", "evil.example").is_err());
        Ok(())
    }
}
