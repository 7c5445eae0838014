//! The registry agrees with the checker's view of which targets have a backend.

use super::*;

#[test]
fn registry_matches_has_backend() {
    for &(name, k) in TargetKind::ALL {
        let registered = REGISTRY.iter().any(|t| t.kind() == k);
        assert_eq!(registered, k.has_backend(), "{name}");
        assert_eq!(get(k, Span::default()).is_ok(), registered, "{name}");
    }
}

#[test]
fn names_are_unique() {
    for (i, a) in REGISTRY.iter().enumerate() {
        for b in &REGISTRY[i + 1..] {
            assert_ne!(a.kind(), b.kind());
        }
    }
}
