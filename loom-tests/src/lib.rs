//! `loom` models of tollgate's per-key state machines live in `tests/`.
