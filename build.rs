//! Build steps: the lalrpop grammar in grammar/ into OUT_DIR, and a table of the standard library
//! modules in stdlib/ (embedded in the binary so collc works from any directory).

use std::fmt::Write;

fn main() {
    println!("cargo:rerun-if-changed=grammar/coll.lalrpop");
    println!("cargo:rerun-if-changed=stdlib");
    lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .set_in_dir("grammar")
        .process()
        .unwrap_or_else(|e| panic!("lalrpop failed: {e}"));

    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = std::path::Path::new(&root).join("stdlib");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".coll"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from(
        "/// Standard library modules: (name, source), sorted by name.\npub static MODULES: &[(&str, &str)] = &[\n",
    );
    for n in names {
        println!("cargo:rerun-if-changed=stdlib/{n}");
        let stem = n.trim_end_matches(".coll");
        writeln!(
            out,
            "    ({stem:?}, include_str!({})),",
            in_crate(&format!("stdlib/{n}"))
        )
        .expect("write to string");
    }
    out.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(std::path::Path::new(&out_dir).join("stdlib_table.rs"), out)
        .expect("write stdlib table");

    // Error code pages for `collc explain`.
    println!("cargo:rerun-if-changed=docs/errors");
    let dir = std::path::Path::new(&root).join("docs").join("errors");
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with('E') && n.ends_with(".md"))
                .collect()
        })
        .unwrap_or_default();
    pages.sort();
    let mut out = String::from(
        "/// Error pages: (code, markdown), sorted by code.\npub static PAGES: &[(&str, &str)] = &[\n",
    );
    for n in pages {
        println!("cargo:rerun-if-changed=docs/errors/{n}");
        let code = n.trim_end_matches(".md");
        writeln!(
            out,
            "    ({code:?}, include_str!({})),",
            in_crate(&format!("docs/errors/{n}"))
        )
        .expect("write to string");
    }
    out.push_str("];\n");
    std::fs::write(std::path::Path::new(&out_dir).join("error_docs.rs"), out)
        .expect("write error docs table");
}

/// A path below the crate's root as the compiler resolves it where the table is compiled, not
/// where this script ran: two checkouts sharing a target directory (worktrees) share this
/// script's output, and an absolute path written here would point into the other one.
fn in_crate(rel: &str) -> String {
    format!(
        "concat!(env!(\"CARGO_MANIFEST_DIR\"), {:?})",
        format!("/{rel}")
    )
}
