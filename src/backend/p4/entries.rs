//! A switch's control-plane state ([`Entry`]) and the two formats users load it in: commands
//! for BMv2's `simple_switch_CLI` ([`cli`]) and a P4Runtime `WriteRequest` in protobuf text
//! ([`p4runtime`]), whose ids come from the [`Schema`] and whose values are the canonical
//! shortest big-endian byte strings of the P4Runtime specification.

use super::schema::Schema;
use std::fmt::Write;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The default action of a table (for a keyless table, its only configuration).
    Default {
        table: String,
        action: String,
        args: Vec<u64>,
    },
    /// An exact-match entry: key values in key order, action arguments in parameter order.
    Add {
        table: String,
        keys: Vec<u64>,
        action: String,
        args: Vec<u64>,
    },
    /// A multicast group and its ports (one replica per port, instance 0).
    Group { id: u32, ports: Vec<u32> },
    /// A clone session to a port.
    Clone { session: u32, port: u32 },
}

/// The entries as `simple_switch_CLI` commands, one per line. Multicast nodes get their handles
/// in creation order from 0, so the file must be loaded into a fresh switch.
pub fn cli(s: &Schema, entries: &[Entry]) -> String {
    let mut o = String::new();
    let mut handle = 0u32;
    for e in entries {
        match e {
            Entry::Default {
                table,
                action,
                args,
            } => {
                let _ = writeln!(
                    o,
                    "table_set_default {} {}{}",
                    s.qualified(table),
                    s.qualified(action),
                    args.iter().map(|a| format!(" {a}")).collect::<String>()
                );
            }
            Entry::Add {
                table,
                keys,
                action,
                args,
            } => {
                let _ = writeln!(
                    o,
                    "table_add {} {}{} =>{}",
                    s.qualified(table),
                    s.qualified(action),
                    keys.iter().map(|k| format!(" {k}")).collect::<String>(),
                    args.iter().map(|a| format!(" {a}")).collect::<String>()
                );
            }
            Entry::Group { id, ports } => {
                let _ = writeln!(o, "mc_mgrp_create {id}");
                let _ = writeln!(
                    o,
                    "mc_node_create 0{}",
                    ports.iter().map(|p| format!(" {p}")).collect::<String>()
                );
                let _ = writeln!(o, "mc_node_associate {id} {handle}");
                handle += 1;
            }
            Entry::Clone { session, port } => {
                let _ = writeln!(o, "mirroring_add {session} {port}");
            }
        }
    }
    o
}

/// The canonical binary string of `v` (P4Runtime: big-endian, the shortest that holds it, one
/// byte for 0), as a protobuf text literal.
pub fn bytes(v: u64) -> String {
    let b = v.to_be_bytes();
    let first = b.iter().position(|&x| x != 0).unwrap_or(7);
    b[first..].iter().fold(String::from("\""), |mut s, x| {
        let _ = write!(s, "\\x{x:02x}");
        s
    }) + "\""
}

/// The entries as one P4Runtime `WriteRequest` (p4.v1), protobuf text, for the switch whose
/// P4Runtime device id is `device` (run.sh starts switch i of the fabric with `--device-id i`).
pub fn p4runtime(s: &Schema, entries: &[Entry], device: usize) -> String {
    let mut o = format!("device_id: {device}\nelection_id {{\n  high: 0\n  low: 1\n}}\n");
    for e in entries {
        match e {
            Entry::Default {
                table,
                action,
                args,
            } => {
                let _ = write!(
                    o,
                    "updates {{\n  type: MODIFY\n  entity {{\n    table_entry {{\n      table_id: {}\n{}      is_default_action: true\n    }}\n  }}\n}}\n",
                    s.id_of(table),
                    action_text(s, action, args)
                );
            }
            Entry::Add {
                table,
                keys,
                action,
                args,
            } => {
                let mut m = String::new();
                for (i, k) in keys.iter().enumerate() {
                    let _ = write!(
                        m,
                        "      match {{\n        field_id: {}\n        exact {{\n          value: {}\n        }}\n      }}\n",
                        i + 1,
                        bytes(*k)
                    );
                }
                let _ = write!(
                    o,
                    "updates {{\n  type: INSERT\n  entity {{\n    table_entry {{\n      table_id: {}\n{m}{}    }}\n  }}\n}}\n",
                    s.id_of(table),
                    action_text(s, action, args)
                );
            }
            Entry::Group { id, ports } => {
                let _ = write!(
                    o,
                    "updates {{\n  type: INSERT\n  entity {{\n    packet_replication_engine_entry {{\n      multicast_group_entry {{\n        multicast_group_id: {id}\n{}      }}\n    }}\n  }}\n}}\n",
                    replicas(ports)
                );
            }
            Entry::Clone { session, port } => {
                let _ = write!(
                    o,
                    "updates {{\n  type: INSERT\n  entity {{\n    packet_replication_engine_entry {{\n      clone_session_entry {{\n        session_id: {session}\n{}      }}\n    }}\n  }}\n}}\n",
                    replicas(&[*port])
                );
            }
        }
    }
    o
}

fn replicas(ports: &[u32]) -> String {
    ports
        .iter()
        .map(|p| {
            format!(
                "        replicas {{\n          port: {}\n          instance: 0\n        }}\n",
                bytes(u64::from(*p))
            )
        })
        .collect()
}

fn action_text(s: &Schema, action: &str, args: &[u64]) -> String {
    let mut t = format!(
        "      action {{\n        action {{\n          action_id: {}\n",
        s.id_of(action)
    );
    for (i, a) in args.iter().enumerate() {
        let _ = write!(
            t,
            "          params {{\n            param_id: {}\n            value: {}\n          }}\n",
            i + 1,
            bytes(*a)
        );
    }
    t.push_str("        }\n      }\n");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_the_shortest_big_endian_strings() {
        assert_eq!(bytes(0), "\"\\x00\"");
        assert_eq!(bytes(7), "\"\\x07\"");
        assert_eq!(bytes(0x1234), "\"\\x12\\x34\"");
    }

    #[test]
    fn multicast_nodes_take_handles_in_creation_order() {
        let s = Schema::new("I");
        let t = cli(
            &s,
            &[
                Entry::Group {
                    id: 3,
                    ports: vec![0, 2],
                },
                Entry::Group {
                    id: 5,
                    ports: vec![1],
                },
            ],
        );
        assert_eq!(
            t,
            "mc_mgrp_create 3\nmc_node_create 0 0 2\nmc_node_associate 3 0\nmc_mgrp_create 5\nmc_node_create 0 1\nmc_node_associate 5 1\n"
        );
    }
}
