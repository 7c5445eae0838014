//! Shared by the all-to-all tests: a `.coll` source checked into its diagnostics and model.

use collc::diag::{Diagnostic, SourceMap};
use collc::sema::model::Model;

/// The checker's diagnostics on `src`, and its model.
pub fn checked(src: &str) -> (Vec<Diagnostic>, Option<Model>) {
    let mut sources = SourceMap::new();
    let id = sources.add("a2a.coll", src.to_string());
    let c = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
    (c.diagnostics, c.model)
}

/// The messages of `diagnostics`, for assertion messages.
pub fn messages(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics.iter().map(|d| d.message.clone()).collect()
}

/// The model of `src`, which must check without diagnostics.
pub fn check(src: &str) -> Model {
    let (diagnostics, model) = checked(src);
    assert!(diagnostics.is_empty(), "{:?}", messages(&diagnostics));
    model.expect("model")
}
