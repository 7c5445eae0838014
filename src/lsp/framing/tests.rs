//! The reader on byte strings: what each kind of broken framing is answered, and that the
//! messages after it are still read.

use super::*;
use serde_json::json;

/// Every frame of `input`, as `msg <id or method>` or `bad <code> <id>`.
fn frames(input: &[u8]) -> Vec<String> {
    let mut r = Input::new(input);
    let mut out = Vec::new();
    while let Some(fs) = read_frames(&mut r).expect("reads from memory") {
        for f in fs {
            out.push(match f {
                Frame::Message(Message::Request(q)) => format!("msg {}", q.id),
                Frame::Message(Message::Notification(n)) => format!("msg {}", n.method),
                Frame::Message(Message::Response(p)) => format!("msg response {}", p.id),
                Frame::Bad(code, _, id) => format!("bad {code} {id}"),
            });
        }
    }
    out
}

fn frame(body: &str) -> Vec<u8> {
    let mut v = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    v.extend_from_slice(body.as_bytes());
    v
}

fn req(id: i32) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}).to_string()
}

fn with_length(body: &str, len: usize) -> Vec<u8> {
    let mut v = format!("Content-Length: {len}\r\n\r\n").into_bytes();
    v.extend_from_slice(body.as_bytes());
    v
}

#[test]
fn well_framed_messages() {
    let mut input = frame(&req(1));
    input.extend(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
    input.extend(frame(r#"{"jsonrpc": "2.0", "method": "exit"}"#));
    // Brackets and quotes inside strings do not end the object early.
    input.extend(frame(
        r#"{"jsonrpc":"2.0","id":3,"method":"x","params":{"s":"}]\"{"}}"#,
    ));
    assert_eq!(frames(&input), ["msg 1", "msg exit", "msg 3"]);
}

#[test]
fn a_length_too_long_ends_at_the_object() {
    let mut input = with_length(&req(1), req(1).len() + 10);
    input.extend(frame(&req(2)));
    assert_eq!(frames(&input), ["msg 1", "msg 2"]);
    // By more than the next frame: every frame is still read.
    let mut input = with_length(&req(1), req(1).len() + 500);
    for id in 2..6 {
        input.extend(frame(&req(id)));
    }
    assert_eq!(
        frames(&input),
        ["msg 1", "msg 2", "msg 3", "msg 4", "msg 5"]
    );
    // The last message: nothing follows, the input ends.
    assert_eq!(frames(&with_length(&req(7), 1000)), ["msg 7"]);
    // Whitespace the length counts is skipped.
    let mut input = with_length(&format!("{}\r\n\t ", req(8)), req(8).len() + 5);
    input.extend(frame(&req(9)));
    assert_eq!(frames(&input), ["msg 8", "msg 9"]);
}

#[test]
fn a_length_too_long_on_a_body_that_is_not_an_object() {
    // A whole value followed by the next header: the value, then the next frame.
    let mut input = with_length("[1, 2]", 16);
    input.extend(frame(&req(2)));
    assert_eq!(frames(&input), ["bad -32600 null", "msg 2"]);
    // A body that does not parse, with the next header inside it.
    let mut input = with_length("{oops", 30);
    input.extend(frame(&req(3)));
    assert_eq!(frames(&input), ["bad -32700 null", "msg 3"]);
}

#[test]
fn a_length_too_short_skips_to_the_next_header() {
    // The rest of the body and the next header on one line (no newline after the body).
    let mut input = with_length(&req(1), 10);
    input.extend(frame(&req(2)));
    assert_eq!(
        frames(&input),
        ["bad -32700 null", "bad -32700 null", "msg 2"]
    );
}

#[test]
fn garbage_is_answered_once_and_skipped() {
    let mut input = b"\xff\xfe garbage\r\nmore garbage\r\n".to_vec();
    input.extend(frame(&req(1)));
    // A "line" longer than a header line, with the header across the cut.
    input.extend(vec![b'x'; MAX_LINE as usize - 5]);
    input.extend(frame(&req(2)));
    input.extend(b"Content-Length: many\r\n\r\n");
    input.extend(frame(&req(3)));
    input.extend(b"Content-Length: 99999999999999\r\n\r\n");
    assert_eq!(
        frames(&input),
        [
            "bad -32700 null",
            "msg 1",
            "bad -32700 null",
            "msg 2",
            "bad -32700 null",
            "msg 3",
            "bad -32700 null"
        ]
    );
}

#[test]
fn ids_json_rpc_does_not_allow() {
    let mut input = Vec::new();
    for id in [json!({"a": 1}), json!([1]), json!(false), json!(null)] {
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}).to_string(),
        ));
    }
    for id in [json!(1.5), json!(1u64 << 40)] {
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}).to_string(),
        ));
    }
    // A string id, and a response with an object id (not a request: no answer of its own).
    input.extend(frame(r#"{"jsonrpc":"2.0","id":"a","method":"shutdown"}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":{},"result":null}"#));
    assert_eq!(
        frames(&input),
        [
            "bad -32600 null",
            "bad -32600 null",
            "bad -32600 null",
            "bad -32600 null",
            "bad -32600 1.5",
            "bad -32600 1099511627776",
            "msg \"a\"",
            "bad -32600 null"
        ]
    );
}
