//! collc: a compiler for collective-communication schedules.
//!
//! Stages, each in its own module, one direction only:
//! [`syntax`] (text to AST) -> [`sema`] (AST to a checked [`sema::model::Model`]) -> lowering into
//! the dataflow [`ir`], proved correct by [`ir::verify`] -> backends. [`diag`] is the one diagnostic type every stage produces; [`fmt`] is
//! the canonical formatter; [`cli`] sits on top and nothing imports it.

#![deny(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod cli;
pub mod diag;
pub mod fmt;
pub mod ir;
pub mod sema;
pub mod syntax;
