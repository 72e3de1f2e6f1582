//! ggpnet-tools: the machinery the `ggpnet` command line and the test suites
//! share, kept out of the `ggpnet` library so that an agent linking the library
//! gets neither it nor the command line's dependencies.
//!
//! - [`corpus`] finds the shared game corpus (`../shared` or `$GGPNET_CORPUS`)
//!   and lists its games with their traces;
//! - [`replay`] reads reference traces and replays them on a [`ggpnet::Game`];
//! - [`differential`] plays random games on the propnet and on the reference
//!   interpreter side by side, and the lanes evaluator against the scalar one;
//! - [`fuzz`] holds the bodies of the fuzz targets, run by libFuzzer (`fuzz/`)
//!   and briefly by `tools/tests/fuzz.rs`;
//! - [`sbg_oracle`] checks a Simplified Boardgames translation against its
//!   direct move generator;
//! - [`shard`] splits the runs of `corpus`, `stats --dir` and `bench` into
//!   shards (`--shard I/N`) and merges their JSON lines (`ggpnet merge`);
//! - [`report`] holds the types of what the command line prints: its JSON
//!   (and CSV) contract.
//!
//! The `ggpnet` binary (`src/main.rs`) is the command line built on them.

#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod corpus;
pub mod differential;
pub mod fuzz;
pub mod replay;
pub mod report;
pub mod sbg_oracle;
pub mod shard;
pub mod shard_file;
