//! Canary frames: Ethernet (EtherType 0x88B5), the 19-byte header of the paper's Section 4.1
//! in network byte order, and for data packets the payload of 32-bit elements.

pub const ETHERTYPE: u16 = 0x88B5;
pub const HEADER: usize = 19;

pub const DATA: u8 = 0;
pub const RETRANSMIT: u8 = 1;
pub const FAILURE: u8 = 2;
pub const CLOCK: u8 = 3;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    pub dst: u32,
    pub id: u32,
    pub counter: u16,
    pub hosts: u16,
    pub children: u32,
    pub sw: u16,
    pub bypass: bool,
    pub multicast: bool,
    pub kind: u8,
}

/// The source MAC of host `addr`: locally administered, the address in its last four bytes.
pub fn mac(addr: u32) -> [u8; 6] {
    let mut m = [0x02, 0, 0, 0, 0, 0];
    m[2..].copy_from_slice(&addr.to_be_bytes());
    m
}

/// A packet: its header and, for data packets, its elements.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packet {
    pub h: Header,
    pub data: Vec<u32>,
}

impl Packet {
    /// The frame, from source MAC `src` to the broadcast address.
    pub fn encode(&self, src: [u8; 6]) -> Vec<u8> {
        let mut f = Vec::with_capacity(14 + HEADER + 4 * self.data.len());
        f.extend_from_slice(&[0xff; 6]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&ETHERTYPE.to_be_bytes());
        let h = &self.h;
        f.extend_from_slice(&h.dst.to_be_bytes());
        f.extend_from_slice(&h.id.to_be_bytes());
        f.extend_from_slice(&h.counter.to_be_bytes());
        f.extend_from_slice(&h.hosts.to_be_bytes());
        f.extend_from_slice(&h.children.to_be_bytes());
        f.extend_from_slice(&h.sw.to_be_bytes());
        f.push(u8::from(h.bypass) << 7 | u8::from(h.multicast) << 6 | (h.kind & 3) << 4);
        if h.kind == DATA {
            for v in &self.data {
                f.extend_from_slice(&v.to_be_bytes());
            }
        }
        f
    }

    /// The packet in frame `f` with `lanes` elements, or None when it is not a Canary frame.
    pub fn decode(f: &[u8], lanes: usize) -> Option<Packet> {
        if f.len() < 14 + HEADER || u16::from_be_bytes([f[12], f[13]]) != ETHERTYPE {
            return None;
        }
        let b = &f[14..];
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let flags = b[18];
        let h = Header {
            dst: u32_at(0),
            id: u32_at(4),
            counter: u16_at(8),
            hosts: u16_at(10),
            children: u32_at(12),
            sw: u16_at(16),
            bypass: flags & 0x80 != 0,
            multicast: flags & 0x40 != 0,
            kind: flags >> 4 & 3,
        };
        let mut data = Vec::new();
        if h.kind == DATA {
            let p = &b[HEADER..];
            if p.len() < 4 * lanes {
                return None;
            }
            data = (0..lanes)
                .map(|i| u32::from_be_bytes([p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]]))
                .collect();
        }
        Some(Packet { h, data })
    }
}
