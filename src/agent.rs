//! Page generation: the agent loop, and the records it leaves behind.

pub mod generation;
