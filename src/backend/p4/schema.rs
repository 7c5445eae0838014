//! The control-plane face of a generated P4 program: its tables, actions and registers with the
//! P4Runtime ids collc fixes for them ([`Schema`]). The P4 source puts each id in an `@id`
//! annotation, the P4Info ([`Schema::p4info`]) lists the same objects, and the table entries
//! ([`super::entries`]) refer to them by these ids, so nothing depends on how a compiler would
//! number them. Ids carry the P4Runtime type prefix in their top byte (p4info.proto `P4Ids`:
//! 0x01 action, 0x02 table, 0x16 register) and number objects in declaration order from 1.

use std::fmt::Write;

/// A parameter of an action, or a match field of a table: name and width in bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub bits: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub id: u32,
    /// Control-local name (`to_port`); the P4Info name is `control.name`.
    pub name: String,
    pub params: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub id: u32,
    pub name: String,
    /// Exact-match keys, by the expression P4 matches on (`meta.to`); empty for a table only
    /// its default action configures.
    pub keys: Vec<Field>,
    /// Action names, in the order of the source's `actions` list.
    pub actions: Vec<String>,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    pub id: u32,
    pub name: String,
    pub bits: u32,
    pub size: u64,
}

/// Every control-plane object of one program, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Schema {
    /// The ingress control's name, which qualifies every object.
    pub control: String,
    pub actions: Vec<Action>,
    pub tables: Vec<Table>,
    pub registers: Vec<Register>,
}

pub const ACTION: u32 = 0x0100_0000;
pub const TABLE: u32 = 0x0200_0000;
pub const REGISTER: u32 = 0x1600_0000;

impl Schema {
    pub fn new(control: &str) -> Schema {
        Schema {
            control: control.into(),
            ..Schema::default()
        }
    }

    /// Declares an action; returns its id.
    pub fn action(&mut self, name: &str, params: &[(&str, u32)]) -> u32 {
        let id = ACTION | (self.actions.len() as u32 + 1);
        self.actions.push(Action {
            id,
            name: name.into(),
            params: fields(params),
        });
        id
    }

    /// Declares a table of `size` entries keyed exactly on `keys`, with `actions`.
    pub fn table(&mut self, name: &str, keys: &[(&str, u32)], actions: &[&str], size: u64) -> u32 {
        let id = TABLE | (self.tables.len() as u32 + 1);
        self.tables.push(Table {
            id,
            name: name.into(),
            keys: fields(keys),
            actions: actions.iter().map(|a| a.to_string()).collect(),
            size,
        });
        id
    }

    /// Declares a register array of `size` cells of `bits` bits.
    pub fn register(&mut self, name: &str, bits: u32, size: u64) -> u32 {
        let id = REGISTER | (self.registers.len() as u32 + 1);
        self.registers.push(Register {
            id,
            name: name.into(),
            bits,
            size,
        });
        id
    }

    pub fn qualified(&self, name: &str) -> String {
        format!("{}.{name}", self.control)
    }

    pub fn find_action(&self, name: &str) -> Option<&Action> {
        self.actions.iter().find(|a| a.name == name)
    }

    pub fn find_table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    pub fn find_register(&self, name: &str) -> Option<&Register> {
        self.registers.iter().find(|r| r.name == name)
    }

    /// The `@id(...)` annotation of the object named `name`.
    pub fn id_of(&self, name: &str) -> u32 {
        self.find_action(name)
            .map(|a| a.id)
            .or_else(|| self.find_table(name).map(|t| t.id))
            .or_else(|| self.find_register(name).map(|r| r.id))
            .unwrap_or(0)
    }

    /// The P4Info of the program, as protobuf text (p4.config.v1.P4Info), in the layout p4c's
    /// `--p4runtime-files` writes: tables, then actions, then registers.
    pub fn p4info(&self) -> String {
        let mut s = String::from(
            "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\npkg_info {\n  arch: \"v1model\"\n}\n",
        );
        for t in &self.tables {
            s.push_str("tables {\n");
            preamble(&mut s, t.id, &self.qualified(&t.name), &t.name);
            for (i, k) in t.keys.iter().enumerate() {
                let _ = write!(
                    s,
                    "  match_fields {{\n    id: {}\n    name: \"{}\"\n    bitwidth: {}\n    match_type: EXACT\n  }}\n",
                    i + 1,
                    k.name,
                    k.bits
                );
            }
            for a in &t.actions {
                let id = self.find_action(a).map_or(0, |a| a.id);
                let _ = write!(s, "  action_refs {{\n    id: {id}\n  }}\n");
            }
            let _ = writeln!(s, "  size: {}\n}}", t.size);
        }
        for a in &self.actions {
            s.push_str("actions {\n");
            preamble(&mut s, a.id, &self.qualified(&a.name), &a.name);
            for (i, p) in a.params.iter().enumerate() {
                let _ = write!(
                    s,
                    "  params {{\n    id: {}\n    name: \"{}\"\n    bitwidth: {}\n  }}\n",
                    i + 1,
                    p.name,
                    p.bits
                );
            }
            s.push_str("}\n");
        }
        for r in &self.registers {
            s.push_str("registers {\n");
            preamble(&mut s, r.id, &self.qualified(&r.name), &r.name);
            let _ = write!(
                s,
                "  type_spec {{\n    bitstring {{\n      bit {{\n        bitwidth: {}\n      }}\n    }}\n  }}\n  size: {}\n}}\n",
                r.bits, r.size
            );
        }
        s.push_str("type_info {\n}\n");
        s
    }
}

fn fields(v: &[(&str, u32)]) -> Vec<Field> {
    v.iter()
        .map(|(n, b)| Field {
            name: n.to_string(),
            bits: *b,
        })
        .collect()
}

fn preamble(s: &mut String, id: u32, name: &str, alias: &str) {
    let _ = write!(
        s,
        "  preamble {{\n    id: {id}\n    name: \"{name}\"\n    alias: \"{alias}\"\n  }}\n"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_the_type_prefix_and_count_from_one() {
        let mut s = Schema::new("Ingress");
        let a = s.action("to_port", &[("port", 9)]);
        let t = s.table("route", &[("meta.to", 32)], &["to_port"], 64);
        let r = s.register("acc_0", 32, 16);
        assert_eq!((a, t, r), (0x0100_0001, 0x0200_0001, 0x1600_0001));
        let text = s.p4info();
        assert!(text.contains("name: \"Ingress.route\""), "{text}");
        assert!(
            text.contains("action_refs {\n    id: 16777217\n  }"),
            "{text}"
        );
    }
}
