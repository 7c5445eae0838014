//! How frames leave and arrive: raw Ethernet on an interface (`AF_PACKET`, what a host in front
//! of a P4 switch uses), or UDP datagrams on the loopback (`--udp BASE`: node `a` listens on
//! port BASE + a and a frame to a neighbour is a datagram to its port), which collc's own
//! execution of the switch program serves in tests.

use std::net::UdpSocket;
use std::time::Duration;

pub trait Link {
    fn send(&mut self, frame: &[u8]) -> std::io::Result<()>;
    /// A frame, or None when none came within the read timeout.
    fn recv(&mut self) -> std::io::Result<Option<Vec<u8>>>;
}

pub struct Udp {
    sock: UdpSocket,
    peer: std::net::SocketAddr,
    buf: Vec<u8>,
}

impl Udp {
    /// Node `me` on the loopback, its frames going to node `peer`.
    pub fn new(base: u16, me: u32, peer: u32) -> std::io::Result<Udp> {
        let port = |a: u32| base.checked_add(a as u16).unwrap_or(base);
        let sock = UdpSocket::bind(("127.0.0.1", port(me)))?;
        sock.set_read_timeout(Some(Duration::from_millis(1)))?;
        Ok(Udp {
            sock,
            peer: ([127, 0, 0, 1], port(peer)).into(),
            buf: vec![0; 65536],
        })
    }
}

impl Link for Udp {
    fn send(&mut self, frame: &[u8]) -> std::io::Result<()> {
        self.sock.send_to(frame, self.peer).map(|_| ())
    }

    fn recv(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        match self.sock.recv_from(&mut self.buf) {
            Ok((n, _)) => Ok(Some(self.buf[..n].to_vec())),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// A raw socket on one interface, for Canary's EtherType only.
pub struct Raw {
    fd: i32,
    buf: Vec<u8>,
}

impl Raw {
    pub fn new(iface: &str) -> std::io::Result<Raw> {
        let proto = (super::frame::ETHERTYPE).to_be();
        let name = std::ffi::CString::new(iface)
            .map_err(|_| std::io::Error::other("interface name with a NUL"))?;
        // SAFETY: plain socket calls on a descriptor this struct owns; the address structs are
        // zeroed and filled as packet(7) says.
        unsafe {
            let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(proto));
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let index = libc::if_nametoindex(name.as_ptr());
            if index == 0 {
                libc::close(fd);
                return Err(std::io::Error::other(format!("no interface `{iface}`")));
            }
            let mut sa: libc::sockaddr_ll = std::mem::zeroed();
            sa.sll_family = libc::AF_PACKET as u16;
            sa.sll_protocol = proto;
            sa.sll_ifindex = index as i32;
            if libc::bind(
                fd,
                &sa as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            ) < 0
            {
                let e = std::io::Error::last_os_error();
                libc::close(fd);
                return Err(e);
            }
            let tv = libc::timeval {
                tv_sec: 0,
                tv_usec: 1000,
            };
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const libc::timeval as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as u32,
            );
            Ok(Raw {
                fd,
                buf: vec![0; 65536],
            })
        }
    }
}

impl Link for Raw {
    fn send(&mut self, frame: &[u8]) -> std::io::Result<()> {
        // SAFETY: the buffer outlives the call; fd is open.
        let n = unsafe {
            libc::send(
                self.fd,
                frame.as_ptr() as *const libc::c_void,
                frame.len(),
                0,
            )
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    fn recv(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        loop {
            let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            // SAFETY: the buffer and address outlive the call; fd is open.
            let n = unsafe {
                libc::recvfrom(
                    self.fd,
                    self.buf.as_mut_ptr() as *mut libc::c_void,
                    self.buf.len(),
                    0,
                    &mut sa as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                    &mut len,
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                return match e.kind() {
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => Ok(None),
                    std::io::ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            if sa.sll_pkttype == libc::PACKET_OUTGOING as u8 {
                continue;
            }
            return Ok(Some(self.buf[..n as usize].to_vec()));
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // SAFETY: fd is open and owned here.
        unsafe {
            libc::close(self.fd);
        }
    }
}
