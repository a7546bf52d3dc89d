//! Benchmarks arrive with the benchmark suite.
fn main() {}
