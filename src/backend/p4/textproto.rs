//! A reader of protobuf text format ([`parse`]), enough for P4Info and P4Runtime write requests:
//! nested messages `name { ... }`, scalar fields `name: value` (numbers, enum words, quoted
//! strings with `\xHH`, octal and character escapes), `#` comments. And [`check`], which reads
//! a P4Info and a write request back and checks every entity of the request against it, as a
//! P4Runtime server would before accepting it.

use std::collections::BTreeMap;

/// A field's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A number or an enum word, as written.
    Word(String),
    /// A quoted string's bytes.
    Bytes(Vec<u8>),
    Msg(Msg),
}

/// A message: its fields in order (repeated fields repeat).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Msg(pub Vec<(String, Value)>);

impl Msg {
    pub fn all<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a Value> + 'a {
        let name = name.to_string();
        self.0
            .iter()
            .filter(move |(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    pub fn msgs<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a Msg> + 'a {
        self.all(name).filter_map(|v| match v {
            Value::Msg(m) => Some(m),
            _ => None,
        })
    }

    pub fn msg(&self, name: &str) -> Option<&Msg> {
        self.msgs(name).next()
    }

    pub fn num(&self, name: &str) -> Option<u64> {
        self.all(name).find_map(|v| match v {
            Value::Word(w) => w.parse().ok(),
            _ => None,
        })
    }

    pub fn word(&self, name: &str) -> Option<&str> {
        self.all(name).find_map(|v| match v {
            Value::Word(w) => Some(w.as_str()),
            _ => None,
        })
    }

    pub fn bytes(&self, name: &str) -> Option<&[u8]> {
        self.all(name).find_map(|v| match v {
            Value::Bytes(b) => Some(b.as_slice()),
            _ => None,
        })
    }

    pub fn text(&self, name: &str) -> Option<String> {
        self.bytes(name)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
}

impl Lexer<'_> {
    fn skip(&mut self) {
        while self.i < self.s.len() {
            match self.s[self.i] {
                b' ' | b'\t' | b'\n' | b'\r' => self.i += 1,
                b'#' => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip();
        self.s.get(self.i).copied()
    }

    fn word(&mut self) -> Result<String, String> {
        self.skip();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"_.-+".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        if start == self.i {
            return Err(format!("expected a name or value at byte {start}"));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn string(&mut self) -> Result<Vec<u8>, String> {
        let q = self.s[self.i];
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err("unterminated string".into());
            };
            self.i += 1;
            if c == q {
                return Ok(out);
            }
            if c != b'\\' {
                out.push(c);
                continue;
            }
            let Some(&e) = self.s.get(self.i) else {
                return Err("unterminated escape".into());
            };
            self.i += 1;
            match e {
                b'x' => {
                    let mut v = 0u32;
                    let mut n = 0;
                    while n < 2 && self.i < self.s.len() && self.s[self.i].is_ascii_hexdigit() {
                        v = v * 16 + (self.s[self.i] as char).to_digit(16).unwrap_or(0);
                        self.i += 1;
                        n += 1;
                    }
                    if n == 0 {
                        return Err("`\\x` without hex digits".into());
                    }
                    out.push(v as u8);
                }
                b'0'..=b'7' => {
                    let mut v = u32::from(e - b'0');
                    let mut n = 1;
                    while n < 3 && self.i < self.s.len() && (b'0'..=b'7').contains(&self.s[self.i])
                    {
                        v = v * 8 + u32::from(self.s[self.i] - b'0');
                        self.i += 1;
                        n += 1;
                    }
                    out.push(v as u8);
                }
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                other => out.push(other),
            }
        }
    }

    fn body(&mut self, close: Option<u8>) -> Result<Msg, String> {
        let mut m = Msg::default();
        loop {
            match self.peek() {
                None if close.is_none() => return Ok(m),
                None => return Err("unclosed message".into()),
                Some(c) if Some(c) == close => {
                    self.i += 1;
                    return Ok(m);
                }
                _ => {}
            }
            let name = self.word()?;
            let mut c = self.peek();
            if c == Some(b':') {
                self.i += 1;
                c = self.peek();
            }
            let v = match c {
                Some(b'{') => {
                    self.i += 1;
                    Value::Msg(self.body(Some(b'}'))?)
                }
                Some(b'<') => {
                    self.i += 1;
                    Value::Msg(self.body(Some(b'>'))?)
                }
                Some(b'"') | Some(b'\'') => Value::Bytes(self.string()?),
                _ => Value::Word(self.word()?),
            };
            m.0.push((name, v));
        }
    }
}

/// Parses protobuf text.
pub fn parse(text: &str) -> Result<Msg, String> {
    Lexer {
        s: text.as_bytes(),
        i: 0,
    }
    .body(None)
}

/// A P4Info's objects as a server looks them up: per table its key widths and actions, per
/// action its parameter widths.
pub struct Info {
    pub tables: BTreeMap<u64, (String, Vec<u64>, Vec<u64>)>,
    pub actions: BTreeMap<u64, (String, Vec<u64>)>,
    pub registers: BTreeMap<u64, String>,
}

/// Reads a P4Info.
pub fn info(text: &str) -> Result<Info, String> {
    let m = parse(text)?;
    let name = |x: &Msg| {
        x.msg("preamble")
            .and_then(|p| Some((p.num("id")?, p.text("name")?)))
            .ok_or_else(|| "an object without a preamble id and name".to_string())
    };
    let mut out = Info {
        tables: BTreeMap::new(),
        actions: BTreeMap::new(),
        registers: BTreeMap::new(),
    };
    for t in m.msgs("tables") {
        let (id, n) = name(t)?;
        let keys = t
            .msgs("match_fields")
            .map(|f| f.num("bitwidth").unwrap_or(0))
            .collect();
        let acts = t.msgs("action_refs").filter_map(|a| a.num("id")).collect();
        out.tables.insert(id, (n, keys, acts));
    }
    for a in m.msgs("actions") {
        let (id, n) = name(a)?;
        let params = a
            .msgs("params")
            .map(|p| p.num("bitwidth").unwrap_or(0))
            .collect();
        out.actions.insert(id, (n, params));
    }
    for r in m.msgs("registers") {
        let (id, n) = name(r)?;
        out.registers.insert(id, n);
    }
    Ok(out)
}

/// Whether `b` is the canonical string of a value of `bits` bits.
fn canonical(b: &[u8], bits: u64) -> Result<(), String> {
    if b.is_empty() || (b.len() > 1 && b[0] == 0) {
        return Err(format!(
            "{b:02x?} is not the shortest byte string of its value"
        ));
    }
    let used = (b.len() as u64 - 1) * 8 + u64::from(8 - b[0].leading_zeros());
    if used > bits {
        return Err(format!("{b:02x?} does not fit {bits} bits"));
    }
    Ok(())
}

/// Checks every update of the write request `text` against `info`.
pub fn check(info: &Info, text: &str) -> Result<usize, String> {
    let m = parse(text)?;
    let mut n = 0;
    for u in m.msgs("updates") {
        n += 1;
        let e = u.msg("entity").ok_or("an update without an entity")?;
        if let Some(t) = e.msg("table_entry") {
            let id = t.num("table_id").ok_or("a table entry without table_id")?;
            let (name, keys, acts) = info
                .tables
                .get(&id)
                .ok_or_else(|| format!("table id {id} is not in the P4Info"))?;
            let default = t.word("is_default_action") == Some("true");
            let matches: Vec<&Msg> = t.msgs("match").collect();
            if !default && matches.len() != keys.len() {
                return Err(format!(
                    "{name}: {} match fields, the table has {}",
                    matches.len(),
                    keys.len()
                ));
            }
            for f in matches {
                let fid = f.num("field_id").unwrap_or(0) as usize;
                let bits = *keys
                    .get(fid.wrapping_sub(1))
                    .ok_or_else(|| format!("{name}: no match field {fid}"))?;
                let v = f
                    .msg("exact")
                    .and_then(|x| x.bytes("value"))
                    .ok_or_else(|| format!("{name}: field {fid} is not an exact match"))?;
                canonical(v, bits).map_err(|e| format!("{name}: field {fid}: {e}"))?;
            }
            let a = t
                .msg("action")
                .and_then(|a| a.msg("action"))
                .ok_or_else(|| format!("{name}: an entry without an action"))?;
            let aid = a.num("action_id").unwrap_or(0);
            if !acts.contains(&aid) {
                return Err(format!("{name}: action {aid} is not one of the table's"));
            }
            let (aname, params) = &info.actions[&aid];
            let given: Vec<&Msg> = a.msgs("params").collect();
            if given.len() != params.len() {
                return Err(format!(
                    "{aname}: {} parameters, the action has {}",
                    given.len(),
                    params.len()
                ));
            }
            for p in given {
                let pid = p.num("param_id").unwrap_or(0) as usize;
                let bits = *params
                    .get(pid.wrapping_sub(1))
                    .ok_or_else(|| format!("{aname}: no parameter {pid}"))?;
                let v = p.bytes("value").ok_or("a parameter without a value")?;
                canonical(v, bits).map_err(|e| format!("{aname}: parameter {pid}: {e}"))?;
            }
        } else if let Some(p) = e.msg("packet_replication_engine_entry") {
            let g = p
                .msg("multicast_group_entry")
                .or_else(|| p.msg("clone_session_entry"))
                .ok_or("an unknown replication entry")?;
            for r in g.msgs("replicas") {
                let port = r.bytes("port").ok_or("a replica without a port")?;
                canonical(port, 9).map_err(|e| format!("replica port: {e}"))?;
            }
        } else {
            return Err("an entity collc does not write".into());
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_messages_strings_and_comments() {
        let m = parse("a: 1 # one\nb { c: \"\\x01\\002z\" d: WORD }\nb < c: 'q' >").unwrap();
        assert_eq!(m.num("a"), Some(1));
        let bs: Vec<&Msg> = m.msgs("b").collect();
        assert_eq!(bs[0].bytes("c"), Some(&b"\x01\x02z"[..]));
        assert_eq!(bs[0].word("d"), Some("WORD"));
        assert_eq!(bs[1].text("c").as_deref(), Some("q"));
        assert!(parse("a { b: 1").is_err());
    }

    #[test]
    fn values_must_be_canonical_and_fit() {
        assert!(canonical(&[0], 9).is_ok());
        assert!(canonical(&[1, 0xff], 9).is_ok());
        assert!(canonical(&[0, 7], 16).is_err());
        assert!(canonical(&[2, 0], 9).is_err());
    }
}
