//! collc: a compiler for collective-communication schedules.
//!
//! Stages, each in its own module, one direction only:
//! [`syntax`] (text to AST) -> [`sema`] (AST to a checked [`sema::model::Model`]) -> lowering into
//! the dataflow [`ir`], proved correct by [`ir::verify`] -> backends, built through one seam,
//! [`target`]. [`diag`] is the one diagnostic type every stage produces; [`fmt`] is
//! the canonical formatter; [`choose`] evaluates schedule families on a file's network and
//! [`compare`] sweeps them over sizes ([`plot`] draws the result); [`calibrate`] fits the flow
//! model to measurements; [`progress`] is the hook long
//! work reports through; [`cli`] and [`lsp`] (the language server) sit on top and nothing
//! imports them.

// No `unsafe` but a memory hint's one call (`sim::prefetch`, which says why it is sound).
#![deny(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod backend;
pub mod calibrate;
pub mod canary;
pub mod choose;
pub mod cli;
pub mod compare;
pub mod cost;
pub mod diag;
pub mod driver;
pub mod fmt;
pub mod forest;
pub mod ir;
pub mod lower;
pub mod lsp;
pub mod mcf;
pub mod net;
pub mod par;
pub mod plot;
pub mod progress;
pub mod ratio;
pub mod sema;
pub mod sim;
pub mod syntax;
pub mod target;
