//! The language server in process: the engine driven by JSON-RPC messages, as an editor would
//! send them, with snapshots of its replies (diagnostics, hover, completion, definition,
//! references, symbols, formatting), error responses, and a property test that half-typed
//! prefixes of real files never crash the server and always get diagnostics published.
//!
//! Paths in snapshots are redacted: the repository is `$REPO`, the standard library cache
//! directory is `$STDLIB`.

use collc::lsp::Engine;
use collc::lsp::uri::StdlibFiles;
use lsp_server::{Message, Notification, Request, RequestId};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stdlib_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("lsp-stdlib")
}

fn file_uri(p: &Path) -> String {
    collc::lsp::uri::from_path(p)
        .map(|u| u.as_str().to_string())
        .unwrap_or_default()
}

/// Capabilities like VS Code's (related information, Markdown, nested symbols).
fn rich_caps() -> Value {
    json!({
        "textDocument": {
            "publishDiagnostics": { "relatedInformation": true },
            "hover": { "contentFormat": ["markdown", "plaintext"] },
            "documentSymbol": { "hierarchicalDocumentSymbolSupport": true },
            "completion": { "completionItem": { "documentationFormat": ["markdown"] } }
        }
    })
}

struct Client {
    engine: Engine,
    next: i32,
}

impl Client {
    fn new() -> Client {
        Client::with_caps(rich_caps())
    }

    fn with_caps(caps: Value) -> Client {
        let mut c = Client {
            engine: Engine::new(StdlibFiles::new(Some(stdlib_dir()))),
            next: 0,
        };
        let r = c.request(
            "initialize",
            json!({ "processId": null, "rootUri": null, "capabilities": caps }),
        );
        assert!(r.get("capabilities").is_some(), "{r}");
        c.notify("initialized", json!({}));
        c
    }

    /// Sends a request; returns its result, or `{"error": ...}`.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        let out = self.engine.handle(Message::Request(Request::new(
            id.clone(),
            method.into(),
            params,
        )));
        for m in out {
            if let Message::Response(r) = m {
                assert_eq!(r.id, id);
                return match r.response_result {
                    Err(e) => json!({ "error": { "code": e.code, "message": e.message } }),
                    Ok(v) => v,
                };
            }
        }
        panic!("no response to {method}");
    }

    /// Sends a notification, lets the server go idle, and returns what it published.
    fn notify(&mut self, method: &str, params: Value) -> Vec<Value> {
        let mut out = self.engine.handle(Message::Notification(Notification::new(
            method.into(),
            params,
        )));
        out.extend(self.engine.idle());
        out.into_iter()
            .filter_map(|m| match m {
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    Some(n.params)
                }
                _ => None,
            })
            .collect()
    }

    fn open(&mut self, uri: &str, text: &str) -> Value {
        let mut p = self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "coll", "version": 1, "text": text } }),
        );
        assert_eq!(p.len(), 1, "one publish per open");
        p.remove(0)
    }

    fn change(&mut self, uri: &str, version: i32, changes: Value) -> Vec<Value> {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": changes }),
        )
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        let mut p = json!({
            "textDocument": { "uri": uri },
            "position": { "line": line, "character": character }
        });
        if method == "textDocument/references" {
            p["context"] = json!({ "includeDeclaration": true });
        }
        self.request(method, p)
    }
}

/// JSON with machine paths replaced.
fn redact(v: &Value) -> String {
    let s = serde_json::to_string_pretty(v).unwrap_or_default();
    let stdlib = file_uri(&stdlib_dir());
    let repo_uri = file_uri(repo());
    s.replace(&stdlib, "file://$STDLIB")
        .replace(&repo_uri, "file://$REPO")
        .replace(&repo().display().to_string(), "$REPO")
}

/// Line and UTF-16 column of the first occurrence of `needle` (plus `shift` characters).
fn pos_of(text: &str, needle: &str, shift: usize) -> (u32, u32) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in text"))
        + shift;
    let line = text[..at].matches('\n').count();
    let start = text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    (line as u32, text[start..at].encode_utf16().count() as u32)
}

const QUICK: &str = "examples/quickstart.coll";

fn example(rel: &str) -> (String, String) {
    let p = repo().join(rel);
    (file_uri(&p), std::fs::read_to_string(&p).expect("example"))
}

const FIXTURE: &str = "editors/lsp/error.coll";

/// Labels of a completion reply, in order.
fn labels(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["label"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Completion at the end of `text` (a new document).
fn complete(text: &str) -> Vec<String> {
    let mut c = Client::new();
    let uri = "file:///project/complete.coll";
    c.open(uri, text);
    let line = text.matches('\n').count() as u32;
    let col = text
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .encode_utf16()
        .count() as u32;
    labels(&c.at("textDocument/completion", uri, line, col))
}

// ------------------------------------------------------------------------------- diagnostics

#[test]
fn diagnostics_of_the_fixture() {
    let mut c = Client::new();
    let (uri, text) = example(FIXTURE);
    insta::assert_snapshot!(redact(&c.open(&uri, &text)));
}

#[test]
fn diagnostics_with_related_spans_and_syntax_errors() {
    let mut c = Client::new();
    let text =
        "let a = 1;\nlet a = 2;\ntopology t { compute x[2]; link x[0] <-> y[1] : 1 GB/s; }\n";
    insta::assert_snapshot!(
        "duplicate_and_undeclared",
        redact(&c.open("file:///project/d.coll", text))
    );
    let text = "param n = 8\nlet m = n;\n";
    insta::assert_snapshot!(
        "missing_semicolon",
        redact(&c.open("file:///project/s.coll", text))
    );
}

#[test]
fn diagnostic_inside_a_stdlib_generator_is_shown_at_the_call() {
    let mut c = Client::new();
    let text = "import ring;\ntopology t = ring(n: 1, bw: 25 GB/s);\n";
    insta::assert_snapshot!(redact(&c.open("file:///project/t.coll", text)));
}

#[test]
fn clients_without_related_information_get_labels_in_the_message() {
    let mut c = Client::with_caps(json!({}));
    let text = "let a = 1;\nlet a = 2;\n";
    let p = c.open("file:///project/d.coll", text);
    let msg = p["diagnostics"][0]["message"].as_str().unwrap_or("");
    assert!(msg.contains("first defined here (1:5)"), "{msg}");
    assert!(p["diagnostics"][0].get("relatedInformation").is_none());
}

#[test]
fn half_typed_statement_keeps_earlier_diagnostics() {
    let mut c = Client::new();
    let uri = "file:///project/carry.coll";
    let text = "let a = bogus;\nlet b = 2;\n";
    let p = c.open(uri, text);
    let codes = |p: &Value| -> Vec<String> {
        p["diagnostics"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|d| d["code"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(codes(&p), ["E0003"]);
    // Start typing a statement on line 2: a syntax error, which hides unknown names...
    let p = c.change(
        uri,
        2,
        json!([{ "range": { "start": { "line": 1, "character": 10 }, "end": { "line": 1, "character": 10 } }, "text": "\nlet c = " }]),
    );
    assert_eq!(p.len(), 1);
    // ...but the unknown name on line 1, untouched, is still shown.
    assert_eq!(codes(&p[0]), ["E0003", "E0001"], "{}", p[0]);
    assert_eq!(p[0]["version"], 2);
    // Fix the name while the syntax error remains: the carried diagnostic goes.
    let p = c.change(
        uri,
        3,
        json!([{ "range": { "start": { "line": 0, "character": 8 }, "end": { "line": 0, "character": 13 } }, "text": "1" }]),
    );
    assert_eq!(codes(&p[0]), ["E0001"]);
    // Finish the statement: clean.
    let p = c.change(
        uri,
        4,
        json!([{ "text": "let a = 1;\nlet b = 2;\nlet c = b;\n" }]),
    );
    assert_eq!(codes(&p[0]), Vec::<String>::new());
}

#[test]
fn carried_diagnostics_move_with_edits_above_them() {
    let mut c = Client::new();
    let uri = "file:///project/move.coll";
    c.open(uri, "let b = 2;\nlet a = bogus;\n");
    // A whole-text change that inserts a broken line at the top.
    let p = c.change(
        uri,
        2,
        json!([{ "text": "let x = \nlet b = 2;\nlet a = bogus;\n" }]),
    );
    let d = &p[0]["diagnostics"];
    let e3 = d
        .as_array()
        .and_then(|a| a.iter().find(|x| x["code"] == "E0003"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(
        e3["range"]["start"],
        json!({ "line": 2, "character": 8 }),
        "{d}"
    );
}

#[test]
fn utf16_positions_in_diagnostics_and_edits() {
    let mut c = Client::new();
    let uri = "file:///project/u.coll";
    // The emoji is two UTF-16 units; `bogus` starts at column 16 in UTF-16, 18 in bytes.
    let p = c.open(uri, "let a = 1; // 😀\nlet b = \"😀\" + bogus;\n");
    let d = &p["diagnostics"][0];
    assert_eq!(
        d["range"]["start"],
        json!({ "line": 1, "character": 15 }),
        "{d}"
    );
    // Replace the emoji on line 1 (columns 9..11) by `x`.
    let p = c.change(
        uri,
        2,
        json!([{ "range": { "start": { "line": 1, "character": 9 }, "end": { "line": 1, "character": 11 } }, "text": "x" }]),
    );
    let d = &p[0]["diagnostics"][0];
    assert_eq!(
        d["range"]["start"],
        json!({ "line": 1, "character": 14 }),
        "{d}"
    );
}

#[test]
fn closing_clears_diagnostics() {
    let mut c = Client::new();
    let uri = "file:///project/c.coll";
    c.open(uri, "let a = bogus;\n");
    let p = c.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert_eq!(p, [json!({ "uri": uri, "diagnostics": [] })]);
}

// ------------------------------------------------------------------------------- hover

#[test]
fn hover_snapshots() {
    let mut c = Client::new();
    let (uri, text) = example(QUICK);
    c.open(&uri, &text);
    let mut out = String::new();
    for (what, needle, shift) in [
        ("generator", "ring_of(hosts", 2),
        ("param", "hosts, 25", 1),
        ("generator parameter", "bw, latency", 0),
        ("loop variable", "host[i]", 5),
        ("node array", "link host", 6),
        ("topology", "topology lab", 10),
        ("collective", "collective allreduce", 12),
        ("schedule", "schedule recursive", 10),
        ("stage", "a4]", 1),
        ("named argument", "lat: 1 us", 1),
    ] {
        let (l, ch) = pos_of(&text, needle, shift);
        let h = c.at("textDocument/hover", &uri, l, ch);
        out.push_str(&format!(
            "== {what} ({l}:{ch})\n{}\n\n",
            h["contents"]["value"].as_str().unwrap_or("<none>")
        ));
    }
    let (uri, text) = example("examples/ring_8.coll");
    c.open(&uri, &text);
    for (what, needle, shift) in [
        ("stdlib generator", "ring(n:", 1),
        ("import", "import ring", 8),
    ] {
        let (l, ch) = pos_of(&text, needle, shift);
        let h = c.at("textDocument/hover", &uri, l, ch);
        out.push_str(&format!(
            "== {what} ({l}:{ch})\n{}\n\n",
            h["contents"]["value"].as_str().unwrap_or("<none>")
        ));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn hover_on_a_schedule_with_auto_stages_and_a_model() {
    let mut c = Client::new();
    let text = "import ring;\ntopology t = ring(n: 6, bw: 25 GB/s);\n\
                collective allreduce { count: 2; dtype: i32; op: sum; }\n\
                model pp: pipelining_postal { alpha_p: 500 ns; alpha_r: 100 ns; beta: 0.4 ns/B; }\n\
                schedule recursive_multiplying { stages: auto; model: pp; }\n\
                let big = max(2, 3) * 1 GiB;\n";
    let uri = "file:///project/auto.coll";
    let p = c.open(uri, text);
    assert_eq!(p["diagnostics"], json!([]));
    let mut out = String::new();
    for (needle, shift) in [
        ("recursive_multiplying", 0),
        ("pp;", 0),
        ("max(", 0),
        ("big", 0),
    ] {
        let (l, ch) = pos_of(text, needle, shift);
        let h = c.at("textDocument/hover", uri, l, ch);
        out.push_str(&format!(
            "== {needle}\n{}\n\n",
            h["contents"]["value"].as_str().unwrap_or("<none>")
        ));
    }
    insta::assert_snapshot!(out);
}

/// A forest schedule: hover names `k` and `chunks` and, solving the forest as lowering does,
/// the count `chunks: auto` resolves to, what the forest model says it reaches and the time
/// `collc sim` simulates; a fixed count gets the auto choice beside it. `auto` is offered after
/// `chunks:`.
#[test]
fn hover_on_a_forest_schedule_shows_the_chunk_choice() {
    let mut c = Client::new();
    let text = "import ring;\ntopology t = ring(n: 8, bw: 25 GB/s);\n\
                collective allgather { size: 64 MiB; }\n\
                schedule forest { k: 1; }\n";
    let uri = "file:///project/forest.coll";
    let p = c.open(uri, text);
    assert_eq!(p["diagnostics"], json!([]));
    let mut out = String::new();
    let (l, ch) = pos_of(text, "forest", 0);
    let h = c.at("textDocument/hover", uri, l, ch);
    out.push_str(&format!(
        "== auto\n{}\n\n",
        h["contents"]["value"].as_str().unwrap_or("<none>")
    ));
    let fixed = text.replace("k: 1; }", "k: 1; chunks: 2; }");
    c.change(uri, 2, json!([{ "text": fixed }]));
    let h = c.at("textDocument/hover", uri, l, ch);
    out.push_str(&format!(
        "== fixed\n{}\n",
        h["contents"]["value"].as_str().unwrap_or("<none>")
    ));
    insta::assert_snapshot!(out);
    let words = complete("schedule forest {\n    chunks: ");
    assert!(words.iter().any(|x| x == "auto"), "{words:?}");
}

/// `stages: auto` without `model:` is chosen under the only declared latency model; hover says
/// so and names the stage list `collc build` lowers.
#[test]
fn hover_on_auto_stages_uses_the_only_declared_model() {
    let mut c = Client::new();
    let text = "import ring;\ntopology t = ring(n: 6, bw: 25 GB/s);\n\
                collective allreduce { count: 2; dtype: i32; op: sum; }\n\
                model simple: postal { alpha: 1 us; beta: 1 ns/B; }\n\
                schedule recursive_multiplying { stages: auto; }\n";
    let uri = "file:///project/only.coll";
    let p = c.open(uri, text);
    assert_eq!(p["diagnostics"], json!([]));
    let (l, ch) = pos_of(text, "recursive_multiplying", 0);
    let h = c.at("textDocument/hover", uri, l, ch);
    let value = h["contents"]["value"]
        .as_str()
        .unwrap_or("<none>")
        .to_string();
    assert!(value.contains("model `simple` (postal)"), "{value}");
    let mut sources = collc::diag::SourceMap::new();
    let id = sources.add("only.coll".to_string(), text.to_string());
    let model = collc::sema::check(&mut sources, id, &Default::default())
        .model
        .expect("checks");
    let built = collc::lower::lower(&model).expect("lowers").name;
    let stages = &built[built.find('[').expect("a stage list")..];
    assert!(
        value.contains(&format!("stages: auto chooses {stages}")),
        "{value}\nbuilt {built}"
    );
}

/// `schedule auto;` on an allreduce lowers as recursive multiplying with `stages: auto`; hover
/// says so and gives that schedule's modelled cost.
#[test]
fn hover_on_schedule_auto_names_the_family_it_lowers_as() {
    let mut c = Client::new();
    let text = "import ring;\ntopology t = ring(n: 6, bw: 25 GB/s);\n\
                collective allreduce { count: 2; dtype: i32; op: sum; }\n\
                schedule auto;\n";
    let uri = "file:///project/auto_family.coll";
    let p = c.open(uri, text);
    assert_eq!(p["diagnostics"], json!([]));
    let (l, ch) = pos_of(text, "auto;", 0);
    let h = c.at("textDocument/hover", uri, l, ch);
    let value = h["contents"]["value"]
        .as_str()
        .unwrap_or("<none>")
        .to_string();
    // On a topology `auto` is chosen by simulation, and the hover says so with every candidate.
    assert!(
        value.contains(
            "`auto` chose recursive_multiplying for 8 B: fastest simulated on the topology"
        ),
        "{value}"
    );
    assert!(value.contains("ring "), "{value}");
    assert!(value.contains("stages: auto chooses ["), "{value}");
}

#[test]
fn plain_text_hover_for_clients_without_markdown() {
    let mut c = Client::with_caps(json!({}));
    let (uri, text) = example(QUICK);
    c.open(&uri, &text);
    let (l, ch) = pos_of(&text, "hosts, 25", 1);
    let h = c.at("textDocument/hover", &uri, l, ch);
    assert_eq!(h["contents"]["kind"], "plaintext");
    assert_eq!(h["contents"]["value"], "param hosts: int = 8\n\nvalue: 8");
}

#[test]
fn hover_in_a_file_with_errors_still_names_things() {
    let mut c = Client::new();
    let (uri, text) = example(FIXTURE);
    c.open(&uri, &text);
    let (l, ch) = pos_of(&text, "topology hosts", 10);
    let h = c.at("textDocument/hover", &uri, l, ch);
    insta::assert_snapshot!(h["contents"]["value"].as_str().unwrap_or("<none>"));
}

// ------------------------------------------------------------------------------- navigation

#[test]
fn definition_snapshots() {
    let mut c = Client::new();
    let (uri, text) = example(FIXTURE);
    c.open(&uri, &text);
    let mut out = serde_json::Map::new();
    for (what, needle, shift) in [
        ("param use", "n: n", 3),
        ("stdlib generator", "ring(n:", 1),
        ("named argument", "bw: 25", 0),
        ("import", "import ring", 8),
        ("nothing", "dtype", 0),
    ] {
        let (l, ch) = pos_of(&text, needle, shift);
        out.insert(what.into(), c.at("textDocument/definition", &uri, l, ch));
    }
    insta::assert_snapshot!(redact(&Value::Object(out)));
    // The stdlib file exists and holds the module.
    let ring = stdlib_dir().join("ring.coll");
    assert_eq!(
        std::fs::read_to_string(ring).ok().as_deref(),
        collc::sema::stdlib::get("ring")
    );
}

#[test]
fn definitions_of_locals_instances_and_fields() {
    let mut c = Client::new();
    let text = "generator pair(bw: bandwidth) {\n    compute gpu[2];\n    link gpu[0] <-> gpu[1] : bw;\n}\n\
                topology t {\n    for i in 0..2 {\n        let k = i + 1;\n        use pair(k * 1 GB/s) as box[i];\n    }\n    \
                link box[0].gpu[0] <-> box[1].gpu[1] : 1 GB/s;\n}\n";
    let uri = "file:///project/n.coll";
    c.open(uri, text);
    let def_line = |c: &mut Client, needle: &str, shift: usize| {
        let (l, ch) = pos_of(text, needle, shift);
        let r = c.at("textDocument/definition", uri, l, ch);
        (
            r["range"]["start"]["line"].as_u64(),
            r["range"]["start"]["character"].as_u64(),
        )
    };
    assert_eq!(
        def_line(&mut c, "k * 1", 0),
        (Some(6), Some(12)),
        "local let"
    );
    assert_eq!(
        def_line(&mut c, "i + 1", 0),
        (Some(5), Some(8)),
        "loop variable"
    );
    assert_eq!(
        def_line(&mut c, "box[0].gpu", 0),
        (Some(7), Some(32)),
        "instance"
    );
    assert_eq!(
        def_line(&mut c, "box[0].gpu", 7),
        (Some(1), Some(12)),
        "field into generator"
    );
    assert_eq!(
        def_line(&mut c, ": bw", 2),
        (Some(0), Some(15)),
        "generator parameter"
    );
}

#[test]
fn references_of_a_param() {
    let mut c = Client::new();
    let (uri, text) = example(QUICK);
    c.open(&uri, &text);
    let (l, ch) = pos_of(&text, "hosts: int", 0);
    let r = c.at("textDocument/references", &uri, l, ch);
    let lines: Vec<u64> = r
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x["range"]["start"]["line"].as_u64())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(lines, [2, 11]);
    let r = c.request(
        "textDocument/references",
        json!({ "textDocument": { "uri": uri }, "position": { "line": l, "character": ch }, "context": { "includeDeclaration": false } }),
    );
    assert_eq!(r.as_array().map(Vec::len), Some(1));
}

#[test]
fn document_symbols() {
    let mut c = Client::new();
    let (uri, text) = example(QUICK);
    c.open(&uri, &text);
    let r = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    let outline: Vec<String> = r
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    let kids: Vec<&str> = s["children"]
                        .as_array()
                        .map(|k| k.iter().filter_map(|c| c["name"].as_str()).collect())
                        .unwrap_or_default();
                    format!("{} {:?}", s["name"].as_str().unwrap_or(""), kids)
                })
                .collect()
        })
        .unwrap_or_default();
    insta::assert_snapshot!(outline.join("\n"));
    // A flat list for clients without nested symbols.
    let mut c = Client::with_caps(json!({}));
    c.open(&uri, &text);
    let r = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert!(
        r.as_array()
            .is_some_and(|a| a.iter().all(|s| s.get("location").is_some()))
    );
}

// ------------------------------------------------------------------------------- completion

#[test]
fn completion_snapshots() {
    let cases = [
        ("top level", ""),
        ("import", "import "),
        ("schedule family", "schedule "),
        ("collective kind", "collective "),
        ("model kind", "model m: "),
        ("target kind", "target "),
        ("parameter type", "generator g(n: "),
        ("collective keys", "collective allreduce {\n    "),
        ("dtype", "collective allreduce {\n    dtype: "),
        ("op", "collective allreduce {\n    op: "),
        ("schedule keys", "schedule canary {\n    "),
        ("target keys", "target msccl {\n    "),
        ("target words", "target msccl {\n    proto: "),
        ("statement", "topology t {\n    "),
        (
            "link attribute",
            "topology t {\n    link a <-> b : 1 GB/s, ",
        ),
    ];
    let mut out = String::new();
    for (what, text) in cases {
        out.push_str(&format!("== {what}\n{}\n", complete(text).join(" ")));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn completion_of_names_in_scope() {
    let text = "param hosts = 8;\nlet bw = 25 GB/s;\ngenerator g(n: int) {\n    compute x[n];\n    for i in 0..n {\n        let j = i + 1;\n        link x[i] <-> x[";
    let got = complete(text);
    for want in ["hosts", "bw", "n", "x", "i", "j", "min", "floor"] {
        assert!(got.iter().any(|g| g == want), "{want} missing from {got:?}");
    }
}

#[test]
fn completion_of_generators_adds_imports() {
    let mut c = Client::new();
    let uri = "file:///project/g.coll";
    let text = "// header\nparam n = 8;\n\ntopology t = ";
    c.open(uri, text);
    let r = c.at("textDocument/completion", uri, 3, 13);
    let torus = r
        .as_array()
        .and_then(|a| a.iter().find(|i| i["label"] == "torus2d"))
        .cloned()
        .unwrap_or(Value::Null);
    insta::assert_snapshot!(redact(&torus));
}

#[test]
fn completion_of_stages_uses_the_rank_count() {
    let mut c = Client::new();
    let uri = "file:///project/st.coll";
    let done = "import ring;\ntopology t = ring(n: 12, bw: 1 GB/s);\ncollective allreduce { count: 4; }\nschedule recursive_multiplying { stages: [a12]; }\n";
    assert_eq!(c.open(uri, done)["diagnostics"], json!([]));
    let typing = done.replace("[a12]; }", "[");
    c.change(uri, 2, json!([{ "text": typing }]));
    let r = c.at("textDocument/completion", uri, 3, 43);
    insta::assert_snapshot!(labels(&r).join("\n"));
}

// ------------------------------------------------------------------------------- formatting

#[test]
fn formatting_is_collc_fmt() {
    let mut c = Client::new();
    let uri = "file:///project/f.coll";
    c.open(uri, "let   a=1 ;\nparam b:int=2;");
    let r = c.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    insta::assert_snapshot!(redact(&r));
    c.change(uri, 2, json!([{ "text": "let a = 1;\n" }]));
    let r = c.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert_eq!(r, json!([]), "already formatted");
    c.change(uri, 3, json!([{ "text": "let a = ;\n" }]));
    let r = c.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert_eq!(r, json!([]), "syntax errors: no edit");
}

#[test]
fn semantic_tokens_classify_names() {
    let mut c = Client::new();
    let (uri, text) = example(QUICK);
    c.open(&uri, &text);
    let r = c.request(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": { "uri": uri } }),
    );
    let data = r["data"].as_array().map(Vec::len).unwrap_or(0);
    assert!(data > 0 && data % 5 == 0, "{r}");
}

// ------------------------------------------------------------------------------- protocol

#[test]
fn errors_are_responses_not_crashes() {
    let mut c = Client::new();
    let r = c.at("textDocument/hover", "file:///nowhere/x.coll", 0, 0);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": "file:///nowhere/x.coll" }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request("textDocument/hover", json!({ "bogus": true }));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request("workspace/symbol", json!({ "query": "" }));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    // Positions past the end are clamped.
    c.open("file:///project/p.coll", "let a = 1;\n");
    let r = c.at("textDocument/hover", "file:///project/p.coll", 99, 99);
    assert_eq!(r, Value::Null);
}

#[test]
fn requests_before_initialize_and_after_shutdown() {
    let mut e = Engine::new(StdlibFiles::new(Some(stdlib_dir())));
    let out = e.handle(Message::Request(Request::new(
        RequestId::from(1),
        "textDocument/hover".into(),
        json!({}),
    )));
    match &out[..] {
        [Message::Response(r)] => {
            assert_eq!(
                r.response_result.as_ref().err().map(|e| e.code),
                Some(-32002)
            )
        }
        other => panic!("{other:?}"),
    }
    let mut c = Client::new();
    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    let r = c.at("textDocument/hover", "file:///project/p.coll", 0, 0);
    assert_eq!(r["error"]["code"], -32600);
    c.notify("exit", Value::Null);
    assert!(c.engine.exited());
    assert_eq!(c.engine.exit_code(), 0);
}

// ------------------------------------------------------------------------------- robustness

/// Every real `.coll` file of the repository.
fn corpus() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["examples", "stdlib", "tests/ui", "editors/lsp"] {
        let Ok(rd) = std::fs::read_dir(repo().join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths
            .into_iter()
            .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        {
            if let Ok(t) = std::fs::read_to_string(&p) {
                out.push(t);
            }
        }
    }
    out
}

/// Types `text` up to `cut` one chunk at a time and asks for everything at the end: every change
/// is answered by one publish of its version, every request by a response.
fn type_prefix(c: &mut Client, uri: &str, text: &str, cuts: &[usize], version: &mut i32) {
    for &cut in cuts {
        let mut cut = cut.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        *version += 1;
        let p = c.change(uri, *version, json!([{ "text": &text[..cut] }]));
        assert_eq!(p.len(), 1, "one publish per change");
        assert_eq!(p[0]["version"], *version);
        let diags = p[0]["diagnostics"].as_array().cloned().unwrap_or_default();
        assert!(
            diags
                .iter()
                .all(|d| d["code"].as_str().is_some_and(|c| c.starts_with('E'))),
            "{diags:?}"
        );
        let prefix = &text[..cut];
        let line = prefix.matches('\n').count() as u32;
        let col = prefix
            .rsplit('\n')
            .next()
            .unwrap_or("")
            .encode_utf16()
            .count() as u32;
        for m in [
            "textDocument/hover",
            "textDocument/definition",
            "textDocument/completion",
            "textDocument/references",
        ] {
            let r = c.at(m, uri, line, col);
            assert!(r.get("error").is_none(), "{m} at {cut}: {r}");
        }
        let r = c.request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": uri } }),
        );
        assert!(r.get("error").is_none());
    }
}

#[test]
fn every_prefix_of_real_files_is_served() {
    let mut c = Client::new();
    let uri = "file:///project/typing.coll";
    c.open(uri, "");
    let mut version = 1;
    for text in corpus() {
        let step = (text.len() / 25).max(1);
        let cuts: Vec<usize> = (0..=text.len()).step_by(step).collect();
        type_prefix(&mut c, uri, &text, &cuts, &mut version);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn half_typed_prefixes_never_crash(file in 0usize..64, cuts in proptest::collection::vec(0usize..4000, 1..6)) {
        let corpus = corpus();
        let text = &corpus[file % corpus.len()];
        let mut c = Client::new();
        let uri = "file:///project/prop.coll";
        c.open(uri, text);
        let mut version = 1;
        type_prefix(&mut c, uri, text, &cuts, &mut version);
    }
}

/// Frames `body` as LSP's base protocol does.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut v = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    v.extend_from_slice(body);
    v
}

/// The bodies of the frames `collc lsp` wrote.
fn bodies(out: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(out);
    let mut rest = text.as_ref();
    let mut v = Vec::new();
    while let Some(at) = rest.find("\r\n\r\n") {
        let len: usize = rest[..at]
            .trim()
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse().ok())
            .expect("a Content-Length header");
        let body = &rest[at + 4..at + 4 + len];
        v.push(serde_json::from_str(body).expect("JSON"));
        rest = &rest[at + 4 + len..];
    }
    v
}

#[test]
fn malformed_messages_are_answered_with_parse_errors_through_the_binary() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut input = Vec::new();
    let msg = |v: Value| frame(v.to_string().as_bytes());
    input.extend(msg(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    ));
    input.extend(msg(
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    ));
    // A body that is not JSON, one cut short by a wrong Content-Length, and JSON that is not a
    // message.
    input.extend(frame(b"{not json"));
    input.extend(b"Content-Length: 5\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7}\r\n");
    input.extend(frame(b"[1, 2]"));
    // A length no one should allocate.
    input.extend(b"Content-Length: 99999999999999\r\n\r\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_collc"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("collc lsp runs");
    let mut stdin = child.stdin.take().expect("piped");
    stdin.write_all(&input).expect("writable");
    drop(stdin);
    let out = child.wait_with_output().expect("collc lsp ends");
    let got = bodies(&out.stdout);
    let codes: Vec<i64> = got
        .iter()
        .filter_map(|b| b["error"]["code"].as_i64())
        .collect();
    assert_eq!(codes, [-32700, -32700, -32700, -32600, -32700], "{got:?}");
    assert!(
        got.iter()
            .any(|b| b["id"] == 1 && b["result"]["capabilities"].is_object()),
        "the server answered initialize: {got:?}"
    );
    // The input ended without `exit`: 1, as before, not a crash.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_server_keeps_serving_after_a_malformed_message() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let msg = |v: Value| frame(v.to_string().as_bytes());
    let mut input = Vec::new();
    input.extend(msg(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    ));
    input.extend(frame(b"{\"jsonrpc\": \"2.0\", \"method\": "));
    input.extend(msg(
        json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
    ));
    input.extend(msg(json!({"jsonrpc": "2.0", "method": "exit"})));
    let mut child = Command::new(env!("CARGO_BIN_EXE_collc"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("collc lsp runs");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(&input)
        .expect("writable");
    let out = child.wait_with_output().expect("collc lsp ends");
    let got = bodies(&out.stdout);
    assert!(got.iter().any(|b| b["error"]["code"] == -32700), "{got:?}");
    assert!(
        got.iter().any(|b| b["id"] == 2),
        "shutdown answered: {got:?}"
    );
    assert_eq!(out.status.code(), Some(0));
}

fn codes_of(p: &Value) -> Vec<String> {
    p["diagnostics"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| d["code"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn internal_errors_are_a_coded_diagnostic() {
    let mut c = Client::new();
    c.engine.inject_fault("boom");
    let uri = "file:///project/fault.coll";
    let p = c.open(uri, "let a = bogus;\n");
    assert_eq!(codes_of(&p), ["E0003"]);
    let p = c.change(uri, 2, json!([{ "text": "let a = bogus; // boom\n" }]));
    // Only the failure: the earlier E0003 may no longer be true.
    assert_eq!(codes_of(&p[0]), ["E0048"], "{}", p[0]);
    assert_eq!(p[0]["version"], 2);
    // The server carries on: the next version is checked again.
    let p = c.change(uri, 3, json!([{ "text": "let a = 1;\n" }]));
    assert_eq!(codes_of(&p[0]), Vec::<String>::new());
}

#[test]
fn renaming_a_declaration_back_while_broken_drops_the_stale_unknown_name() {
    // Issue 19: rename `param hosts` to `hostz`, delete a `;`, rename back: the unknown name
    // `hosts` must not stay while the syntax error does.
    let mut c = Client::new();
    let uri = "file:///project/stale.coll";
    let good = "param hosts: int = 4;\n\
                topology t { compute h[hosts]; for i in 0..hosts - 1 { link h[i] <-> h[i + 1] : 1 GB/s; } }\n\
                collective allreduce { count: 8; }\n";
    let p = c.open(uri, good);
    assert_eq!(codes_of(&p), Vec::<String>::new(), "{p}");
    let renamed = good.replacen("param hosts", "param hostz", 1);
    let p = c.change(uri, 2, json!([{ "text": renamed }]));
    assert!(codes_of(&p[0]).iter().all(|c| c == "E0003"), "{}", p[0]);
    assert!(!codes_of(&p[0]).is_empty());
    let broken = renamed.replacen("count: 8;", "count: 8", 1);
    let p = c.change(uri, 3, json!([{ "text": broken }]));
    // Still true: `hosts` is still undeclared, so it is carried beside the syntax error.
    assert!(codes_of(&p[0]).contains(&"E0003".to_string()), "{}", p[0]);
    assert!(codes_of(&p[0]).contains(&"E0001".to_string()), "{}", p[0]);
    let back = broken.replacen("param hostz", "param hosts", 1);
    let p = c.change(uri, 4, json!([{ "text": back }]));
    assert_eq!(codes_of(&p[0]), ["E0001"], "{}", p[0]);
}

#[test]
fn a_document_generating_millions_of_links_does_not_block_the_editor() {
    let mut c = Client::new();
    let uri = "file:///project/huge.coll";
    let text = "topology t {\n    compute h[1000];\n    for i in 0..1000 { for j in 0..1000 { link h[i] -> h[j] : 1 GB/s, parallel 2; } }\n}\ncollective allreduce { count: 8; }\n";
    let start = std::time::Instant::now();
    let p = c.open(uri, text);
    let took = start.elapsed();
    assert!(codes_of(&p).contains(&"E0018".to_string()), "{p}");
    assert!(took < std::time::Duration::from_secs(3), "took {took:?}");
}
