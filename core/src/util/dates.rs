//! UTC calendar dates and RFC 3339 instants: the forms crate's, where `format: date` fields are
//! validated with them, named here for the rest of the server (the chat's planner, the demo API,
//! receipts).

pub use tessera_forms::dates::*;
