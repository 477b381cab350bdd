//! roam's UDP runtime: the sans-IO engines of `roam-proto` over real sockets, on tokio, with
//! the same code and the same encoded datagrams the simulator uses.
//!
//! - [`Driver`]: one UDP socket per local address in use (optionally bound to its device),
//!   an [`Endpoint`](roam_proto::endpoint::Endpoint) holding the connections, a monotonic
//!   [`Clock`] read here and never inside an engine; the application calls
//!   [`Driver::step`] in a loop and uses its connections between steps.
//! - [`Server`]: serves a directory ([`DirStore`]: no name leaves it) to every engine.
//! - [`fetch`]: downloads one object over RCP, verified against its length and BLAKE3
//!   digest, continuing from another local address or server when one stops answering; with
//!   more than one local address or server over R²CP, one pipe per (address, server) pair,
//!   pipes removed and added while the transfer runs.
//! - [`stream`]: byte streams over the TCP-like engine for applications: a
//!   [`Listener`](stream::Listener) accepts, [`Stream::connect`](stream::Stream::connect)
//!   opens, a [`Stream`](stream::Stream) is tokio's `AsyncRead` + `AsyncWrite` with
//!   progress snapshots ([`StreamStats`](stream::StreamStats)); tested example there.
//!
//! Design and status: `docs/RUNTIME.md`.
//!
//! # Example: serve a directory and fetch a file from it over loopback
//!
//! ```
//! # fn main() -> Result<(), roam_net::NetError> {
//! use std::time::Duration;
//! use roam_net::{fetch, FetchPlan, LocalSpec, Server};
//!
//! let dir = tempfile::tempdir()?;
//! let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
//! std::fs::write(dir.path().join("blob"), &data)?;
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! rt.block_on(async {
//!     let server = Server::bind(dir.path(), &[LocalSpec::addr("127.0.0.1:0".parse().unwrap())])?;
//!     let addr = server.local_addr(0).expect("bound");
//!     let serving = tokio::spawn(server.run());
//!     let plan = FetchPlan::new("blob", vec![addr], vec!["127.0.0.1:0".parse().unwrap()]);
//!     let out = dir.path().join("copy");
//!     let report = fetch(&plan, &out, |_progress| {}).await?;
//!     assert_eq!(report.bytes, data.len() as u64);
//!     assert_eq!(std::fs::read(&out)?, data);
//!     serving.abort();
//!     Ok::<_, roam_net::NetError>(())
//! })?;
//! # Ok(()) }
//! ```

mod batch;
mod beneath;
mod clock;
mod digests;
mod driver;
pub mod engines;
mod error;
mod fetch;
mod host_key;
mod links;
mod local_status;
mod pattern;
mod perf;
mod pipe_meter;
mod serve;
mod socket;
pub mod store;
pub mod stream;
mod stream_task;
pub mod tcp_request;
mod tree;

pub use clock::Clock;
pub use driver::{random_key, random_u64, Driver, DriverStats, NetEndpoint};
pub use engines::{NetConn, ServerAcceptor};
pub use error::NetError;
pub use fetch::{fetch, fetch_tcp, FetchPlan, FetchReport, Progress};
pub use links::{LinkFactsError, LinkTable};
pub use local_status::LocalStatus;
pub use perf::{perf_rcp, perf_tcp, Amount, PerfReport};
pub use pipe_meter::PipeProgress;
pub use serve::Server;
pub use socket::LocalSpec;
pub use store::{parse_digest, DirStore, ObjectMeta};
