//! Demo content shipped with the app so it is useful with no configuration: pages to try and
//! (with the workflow issue) the demo workflows.

pub mod drill;
pub mod emails;
pub mod expenses;
pub mod expenses_api;
pub mod field_types;
pub mod items;
pub mod workflows;
