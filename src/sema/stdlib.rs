//! The standard library: the `.coll` modules in stdlib/, embedded at build time. `import ring;`
//! loads `stdlib/ring.coll`.

include!(concat!(env!("OUT_DIR"), "/stdlib_table.rs"));

/// The source of a standard library module.
pub fn get(name: &str) -> Option<&'static str> {
    MODULES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// Names of all modules, sorted.
pub fn names() -> impl Iterator<Item = &'static str> {
    MODULES.iter().map(|(n, _)| *n)
}
