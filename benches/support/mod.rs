//! Code shared by the benchmarks and the `compare` example: the classic
//! baselines, key sets, constructors for every contender and the
//! multi-thread harness.

#![allow(dead_code)]

pub mod args;
pub mod baseline;
pub mod batch;
pub mod contenders;
pub mod floor;
pub mod keyed_floor;
pub mod keys;
pub mod median;
pub mod registry_baseline;
pub mod scan;
pub mod string_contenders;
pub mod threads;
