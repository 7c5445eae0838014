//! Every example in docs/language.md (and README.md) is checked by collc.
//!
//! Fenced blocks are classified by their info string:
//! - ```` ```coll ````: a complete file that must check without any diagnostic; a `param` whose
//!   value is `false` fails the test, so `param ok: bool = ...;` states a fact the example shows;
//! - ```` ```coll-error E0xxx ````: a complete file whose first diagnostic has code E0xxx;
//! - ```` ```coll-fragment ````: a piece of syntax shown inline, not run.
//!
//! Other info strings (`text`, `sh`, ...) are ignored. On failure the message names the file and
//! line of the block's opening fence and shows the rendered diagnostics.

use collc::diag::{Code, SourceMap, render};
use collc::sema::{Options, check};
use std::path::Path;

#[derive(Debug)]
enum Expect {
    Clean,
    Error(String),
}

#[derive(Debug)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    expect: Expect,
    text: String,
}

/// Extracts the tested blocks of a Markdown file. Panics on a malformed `coll` info string, so a
/// typo such as `coll-eror` cannot silently skip an example.
fn blocks(doc: &str, name: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = doc.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let info = info.trim();
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("");
        let expect = match lang {
            "coll" => Some(Expect::Clean),
            "coll-error" => {
                let code = words.next().unwrap_or_else(|| {
                    panic!("{name}:{}: `coll-error` needs a code, e.g. E0005", i + 1)
                });
                assert!(
                    Code::parse(code).is_some_and(|c| c.as_str() == code),
                    "{name}:{}: `{code}` is not a diagnostic code",
                    i + 1
                );
                Some(Expect::Error(code.to_string()))
            }
            "coll-fragment" => None,
            other if other.starts_with("coll") => {
                panic!("{name}:{}: unknown info string `{info}`", i + 1)
            }
            _ => None,
        };
        // Collect the body up to the closing fence, a line of only backticks (also for skipped
        // blocks, so that a fence inside them is not mistaken for an opening one).
        let mut text = String::new();
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            if l.trim() == "```" {
                closed = true;
                break;
            }
            text.push_str(l);
            text.push('\n');
        }
        assert!(closed, "{name}:{}: unclosed code block", i + 1);
        if let Some(expect) = expect {
            out.push(Block {
                line: i + 1,
                expect,
                text,
            });
        }
    }
    out
}

/// Checks every block of one file; returns the failures.
fn run(name: &str, doc: &str) -> (usize, Vec<String>) {
    let bs = blocks(doc, name);
    let mut failures = Vec::new();
    for b in &bs {
        let mut sources = SourceMap::new();
        let id = sources.add(format!("{name}:{}", b.line), b.text.clone());
        let c = check(&mut sources, id, &Options::default());
        let shown = || render::to_text(&c.diagnostics, &sources);
        match &b.expect {
            Expect::Clean => {
                if !c.diagnostics.is_empty() {
                    failures.push(format!(
                        "{name}:{}: a `coll` example has diagnostics:\n{}",
                        b.line,
                        shown()
                    ));
                } else if let Some(model) = &c.model {
                    // A `param NAME: bool` in an example is an assertion: it must be true.
                    for (k, v) in &model.params {
                        if v == "false" {
                            failures.push(format!(
                                "{name}:{}: the example's assertion `param {k}` is false",
                                b.line
                            ));
                        }
                    }
                } else {
                    failures.push(format!(
                        "{name}:{}: a `coll` example produced no model",
                        b.line
                    ));
                }
            }
            Expect::Error(code) => match c.diagnostics.first() {
                None => failures.push(format!(
                    "{name}:{}: a `coll-error {code}` example checks cleanly",
                    b.line
                )),
                Some(d) if d.code.as_str() != code => failures.push(format!(
                    "{name}:{}: expected {code} first, found {}:\n{}",
                    b.line,
                    d.code.as_str(),
                    shown()
                )),
                Some(_) => {}
            },
        }
    }
    (bs.len(), failures)
}

fn read(rel: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(path).ok()
}

#[test]
fn language_reference_examples() {
    let doc = read("docs/language.md").expect("docs/language.md exists");
    let (n, failures) = run("docs/language.md", &doc);
    assert!(
        n >= 40,
        "only {n} tested examples found in docs/language.md; is the fence syntax broken?"
    );
    assert!(
        failures.is_empty(),
        "{} of {n} examples failed:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn language_reference_covers_both_kinds() {
    let doc = read("docs/language.md").expect("docs/language.md exists");
    let bs = blocks(&doc, "docs/language.md");
    let clean = bs
        .iter()
        .filter(|b| matches!(b.expect, Expect::Clean))
        .count();
    let errors = bs.len() - clean;
    assert!(clean > 0 && errors > 0, "clean {clean}, error {errors}");
}

#[test]
fn readme_examples() {
    let Some(doc) = read("README.md") else {
        return;
    };
    let (n, failures) = run("README.md", &doc);
    assert!(
        failures.is_empty(),
        "{} of {n} examples failed:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn extraction_follows_the_conventions() {
    let doc = "intro\n```coll\nlet a = 1;\n```\n```coll-fragment\nlink a <-> b;\n```\n\
               ```text\n```coll\n```\n```coll-error E0006\nlet x = 1 foo;\n```\n";
    let bs = blocks(doc, "t.md");
    assert_eq!(bs.len(), 2, "{bs:?}");
    assert_eq!(bs[0].line, 2);
    assert!(matches!(bs[0].expect, Expect::Clean));
    assert_eq!(bs[0].text, "let a = 1;\n");
    assert_eq!(bs[1].line, 11);
    assert!(matches!(&bs[1].expect, Expect::Error(c) if c == "E0006"));
    let (n, failures) = run("t.md", doc);
    assert_eq!((n, failures.len()), (2, 0), "{failures:?}");
    let (_, failures) = run("t.md", "```coll\nparam ok: bool = 1 + 1 == 3;\n```\n");
    assert_eq!(
        failures.len(),
        1,
        "a false assertion must fail: {failures:?}"
    );
}
