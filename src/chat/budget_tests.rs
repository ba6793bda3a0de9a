//! Tests of the model-facing output budget (`budget.rs`, `spill.rs`).
