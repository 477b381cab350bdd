//! roam's sans-IO protocol engines.
//!
//! Engines never touch sockets, clocks, threads or a global RNG: the host (the simulator in
//! `roam-sim`, or a UDP runtime) hands them time and datagrams and asks them for datagrams and
//! deadlines. See `docs/ARCHITECTURE.md` for the driving contract.
//!
//! # Driving an engine
//!
//! A host loop, here with both ends in one process and a perfect 10 ms wire: hand each
//! datagram to the peer, fire timers at their deadlines, let the applications write and read.
//! A real host does the same with sockets and a monotonic clock, and draws the connection id,
//! the initial sequence number and the server's [`endpoint::TokenKey`] from its RNG. The
//! server holds no state until the client's first segment echoes its SYN cookie: datagrams
//! for no connection go to a [`tcp::TcpAcceptor`].
//!
//! ```
//! use std::collections::VecDeque;
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use roam_proto::cc::CcKind;
//! use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
//! use roam_proto::tcp::{Connection, Event, TcpAcceptor, TcpConfig};
//! use roam_proto::Time;
//! use roam_wire::ConnId;
//!
//! let cfg = Arc::new(TcpConfig::default());
//! let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
//! let mut now = Time::ZERO;
//! let (isn, key) = (0x2545_f491_4f6c_dd1d, TokenKey::new(*b"a random secret!"));
//! let mut client =
//!     Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(1), isn, now).unwrap();
//! let mut acceptor = TcpAcceptor::new(cfg.clone(), CcKind::NewReno).unwrap();
//! let mut server: Option<Connection> = None;
//! // Datagrams on the wire: (arrival time, to the server?, bytes).
//! let mut wire: VecDeque<(Time, bool, Vec<u8>)> = VecDeque::new();
//! let (mut written, mut received, mut buf) = (0, Vec::new(), Vec::new());
//! while received.len() < data.len() {
//!     // Applications: the client writes what its buffer takes, the server reads.
//!     written += client.write(&data[written..]);
//!     if let Some(s) = server.as_mut() {
//!         s.read(&mut received, usize::MAX);
//!         while let Some(ev) = s.poll_event() {
//!             assert_ne!(ev, Event::Reset);
//!         }
//!     }
//!     // Outgoing datagrams.
//!     while client.poll_transmit(now, &mut buf).is_some() {
//!         wire.push_back((now + Duration::from_millis(10), true, buf.clone()));
//!     }
//!     if let Some(s) = server.as_mut() {
//!         while s.poll_transmit(now, &mut buf).is_some() {
//!             wire.push_back((now + Duration::from_millis(10), false, buf.clone()));
//!         }
//!     }
//!     // Wait for the next arrival or deadline, whichever comes first.
//!     let deadline = [client.poll_timeout(), server.as_ref().and_then(|s| s.poll_timeout())]
//!         .into_iter()
//!         .flatten()
//!         .min();
//!     match (wire.front().map(|w| w.0), deadline) {
//!         (Some(at), d) if d.is_none_or(|d| at <= d) => {
//!             let (at, to_server, bytes) = wire.pop_front().unwrap();
//!             now = at;
//!             match (to_server, server.as_mut()) {
//!                 (true, Some(s)) => s.handle_datagram(now, &bytes).unwrap(),
//!                 (true, None) => {
//!                     let mut reply = Vec::new();
//!                     match acceptor.on_unknown(now, &key, "client", &bytes, &mut reply) {
//!                         Unknown::Accept(s) => server = Some(s),
//!                         Unknown::Reply { len } | Unknown::Reset { len } => {
//!                             reply.truncate(len);
//!                             wire.push_back((now + Duration::from_millis(10), false, reply));
//!                         }
//!                         Unknown::Drop => {}
//!                     }
//!                 }
//!                 (false, _) => client.handle_datagram(now, &bytes).unwrap(),
//!             }
//!         }
//!         (_, Some(d)) => {
//!             now = now.max(d);
//!             client.handle_timeout(now);
//!             if let Some(s) = server.as_mut() {
//!                 s.handle_timeout(now);
//!             }
//!         }
//!         _ => unreachable!("a transfer in progress always has something pending"),
//!     }
//! }
//! assert_eq!(received, data);
//! ```

pub mod time;

pub use time::Time;
pub mod cc;
pub mod endpoint;
pub mod linkinfo;
pub mod loss_cause;
pub mod media;
pub mod ptcp;
pub mod r2cp;
pub mod rcp;
pub mod rtt;
pub mod seqspace;
pub mod source;
pub mod tcp;
