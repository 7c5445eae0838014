//! Shared by the all-to-all tests: a `.coll` source checked into its model.

use collc::diag::SourceMap;
use collc::sema::model::Model;

/// The model of `src`, which must check without diagnostics.
pub fn check(src: &str) -> Model {
    let mut sources = SourceMap::new();
    let id = sources.add("a2a.coll", src.to_string());
    let checked = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
    assert!(
        checked.diagnostics.is_empty(),
        "{:?}",
        checked
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
    );
    checked.model.expect("model")
}
