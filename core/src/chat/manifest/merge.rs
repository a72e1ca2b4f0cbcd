//! Several sites as one manifest: the orchestrator drives one manifest, so configured sites are
//! merged into it, each operation carrying its own site's base URL and credentials.
//!
//! A tool name two sites share is prefixed with each site's name (`github_listIssues`), and so is
//! an entity two sites share, so neither a `/tool` nor a discovered preview can cross sites; a
//! name only one site has stays as it is, so an unqualified unique name always works.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{openapi::tool_name, Manifest, ManifestError, TagRelationships};

impl Manifest {
    /// `sites` as one manifest; one site comes back as it is.
    ///
    /// # Errors
    /// [`ManifestError`] when two sites have the same name, or the merged relationships
    /// contradict themselves.
    pub fn merge(mut sites: Vec<Self>) -> Result<Self, ManifestError> {
        if sites.len() == 1 {
            if let Some(site) = sites.pop() {
                return Ok(site);
            }
        }
        let mut site_names = BTreeSet::new();
        for site in &sites {
            if !site_names.insert(site.site.clone()) {
                return Err(ManifestError::invalid(
                    "manifest",
                    format!(
                        "two sites are called `{}`; give one a different name",
                        site.site
                    ),
                ));
            }
        }
        let count = |key: fn(&Self) -> Vec<String>| {
            let mut counts: HashMap<String, usize> = HashMap::new();
            for site in &sites {
                for name in key(site).into_iter().collect::<BTreeSet<_>>() {
                    *counts.entry(name).or_default() += 1;
                }
            }
            counts
        };
        let names = count(|site| site.operations.iter().map(|op| op.name.clone()).collect());
        let entities = count(|site| site.operations.iter().map(|op| op.entity.clone()).collect());
        let qualified = |site: &str, name: &str| tool_name(Some(&format!("{site}_{name}")), "", "");
        let mut operations = Vec::new();
        let mut index = HashMap::new();
        let mut relationships = TagRelationships::default();
        let descriptions: Vec<String> = sites
            .iter()
            .map(|site| format!("{}: {}", site.site, site.description))
            .collect();
        let base_url = sites
            .first()
            .map(|site| site.base_url.clone())
            .unwrap_or_default();
        for site in sites {
            let rename: BTreeMap<String, String> = site
                .operations
                .iter()
                .map(|operation| {
                    let name = if names.get(&operation.name).copied().unwrap_or(0) > 1 {
                        qualified(&site.site, &operation.name)
                    } else {
                        operation.name.clone()
                    };
                    (operation.name.clone(), name)
                })
                .collect();
            let renamed = |name: &str| rename.get(name).cloned().unwrap_or_else(|| name.to_owned());
            let entity_of = |entity: &str| {
                if entities.get(entity).copied().unwrap_or(0) > 1 {
                    format!("{}-{entity}", site.site)
                } else {
                    entity.to_owned()
                }
            };
            for mut operation in site.operations {
                operation.name = renamed(&operation.name);
                operation.entity = entity_of(&operation.entity);
                operation.requires_preview = operation.requires_preview.as_deref().map(renamed);
                if operation.http.base_url.is_none() {
                    operation.http.base_url = Some(site.base_url.clone());
                }
                if operation.auth.is_none() {
                    operation.auth.clone_from(&site.auth);
                }
                if index
                    .insert(operation.name.clone(), operations.len())
                    .is_some()
                {
                    return Err(ManifestError::invalid(&operation.name, "is defined twice"));
                }
                operations.push(operation);
            }
            for (operation, preview) in site.tag_relationships.preview_for {
                relationships
                    .preview_for
                    .insert(renamed(&operation), renamed(&preview));
            }
            for (entity, members) in site.tag_relationships.entity_groups {
                relationships
                    .entity_groups
                    .entry(entity_of(&entity))
                    .or_default()
                    .extend(members.iter().map(|name| renamed(name)));
            }
        }
        let merged = Self {
            site: site_names.into_iter().collect::<Vec<_>>().join(", "),
            description: descriptions.join("; "),
            base_url,
            auth: None,
            tag_relationships: relationships,
            operations,
            index,
        };
        merged.check_relationships()?;
        Ok(merged)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::manifest::tests::{bulk_delete, search, with};

    fn site(
        name: &str,
        base_url: &str,
        operations: &[serde_json::Value],
    ) -> Result<Manifest, ManifestError> {
        Manifest::from_json(
            &json!({"site": name, "base_url": base_url, "operations": operations}).to_string(),
        )
    }

    #[test]
    fn only_names_two_sites_share_are_prefixed_and_each_keeps_its_base_url(
    ) -> Result<(), ManifestError> {
        let first = site("alpha", "http://127.0.0.1:1", &[search(), bulk_delete()])?;
        let second = site(
            "beta",
            "http://127.0.0.1:2",
            &[search(), with(search(), "name", json!("findOther"))],
        )?;
        let merged = Manifest::merge(vec![first, second])?;
        let names: Vec<&str> = merged
            .operations()
            .iter()
            .map(|op| op.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "alpha_searchItems",
                "bulkDelete",
                "beta_searchItems",
                "findOther"
            ]
        );
        let bulk = merged
            .operation("bulkDelete")
            .ok_or_else(|| ManifestError::Parse("missing".into()))?;
        assert_eq!(bulk.http.base_url.as_deref(), Some("http://127.0.0.1:1"));
        assert_eq!(bulk.entity, "alpha-items");
        // The discovered preview stays on the bulk delete's own site.
        assert_eq!(
            merged
                .preview_operation_for(bulk)
                .map(|op| op.name.as_str()),
            Some("alpha_searchItems")
        );
        Ok(())
    }
}
