//! UTC calendar dates for the planner, the routing fit check and the demo API.
//!
//! The arithmetic lives in [`crate::util::dates`] (over the `time` crate), shared with form
//! validation and receipts; this module keeps the chat's imports short.

pub use crate::util::dates::{iso_datetime, parse_instant, CivilDate};
