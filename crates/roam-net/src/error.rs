//! The runtime's errors: one line each, for the CLI.

use std::net::SocketAddr;

use roam_proto::endpoint::InsertError;
use roam_proto::r2cp::R2cpError;
use roam_proto::rcp::RcpError;
use roam_proto::tcp;

use crate::store::{NameError, ServeDirError};

/// What went wrong in the runtime.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A socket could not be bound.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A socket could not be bound to its device.
    #[error("cannot bind {addr} to device {device}: {source}")]
    Device {
        /// The address.
        addr: SocketAddr,
        /// The interface name.
        device: String,
        /// Why.
        source: std::io::Error,
    },
    /// The directory to serve does not exist or is not a directory.
    #[error("cannot serve {path}: {reason}")]
    ServeDir {
        /// The directory.
        path: String,
        /// Why.
        reason: ServeDirError,
    },
    /// A local file could not be written or read.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The output (`-o`) cannot be used as asked: it is not a file name, or it is a node a
    /// download must not replace, or another download holds it.
    #[error("{path}: {reason}")]
    Output {
        /// The output or its part file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The object name cannot be asked for (refused before anything is sent).
    #[error("{name:?}: {reason}")]
    Name {
        /// The name.
        name: String,
        /// Why.
        reason: NameError,
    },
    /// The object's metadata was malformed.
    #[error("bad metadata for {name}: {reason}")]
    Meta {
        /// The object.
        name: String,
        /// Why.
        reason: String,
    },
    /// The object arrived but does not match its length or digest.
    #[error("{name}: {reason}")]
    Integrity {
        /// The object.
        name: String,
        /// What did not match.
        reason: String,
    },
    /// A group of the object failed verification against the BLAKE3 tree as it arrived
    /// (verified streaming): whoever sent it is found out and dropped by the fetch pipeline.
    #[error("{name}: bytes {start}..{end} (group {group}) fail verification")]
    Corrupt {
        /// The object.
        name: String,
        /// The group's index.
        group: u64,
        /// Its first byte.
        start: u64,
        /// Its end (exclusive).
        end: u64,
    },
    /// No server and local address left to try.
    #[error("cannot fetch {name}: {reason}")]
    Unreachable {
        /// The object.
        name: String,
        /// The last failure.
        reason: String,
    },
    /// A TCP-like connection or acceptor refused its configuration.
    #[error("engine configuration: {0}")]
    Tcp(#[from] tcp::OpenError),
    /// An RCP receiver refused its configuration or range.
    #[error("engine configuration: {0}")]
    Rcp(#[from] RcpError),
    /// An R²CP receiver refused its configuration or range, or a pipe.
    #[error("engine configuration: {0}")]
    R2cp(#[from] R2cpError),
    /// The endpoint refused a connection or a path (conn id in use, unmapped path).
    #[error("engine configuration: {0}")]
    Insert(#[from] InsertError),
    /// The request does not fit a new connection's send buffer.
    #[error("engine configuration: the request does not fit the send buffer")]
    RequestTooLarge,
    /// Any other socket error.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// The engines' errors reach the user in the words the CLI always printed, and a library
    /// user still matches on (or downcasts to) the engine's own error.
    #[test]
    fn engine_errors_keep_their_words_and_their_type() {
        let e = NetError::from(RcpError::Range);
        assert_eq!(
            e.to_string(),
            "engine configuration: range: end before start"
        );
        assert!(matches!(e, NetError::Rcp(RcpError::Range)));
        let source = e.source().and_then(|s| s.downcast_ref::<RcpError>());
        assert_eq!(source, Some(&RcpError::Range));
        let e = NetError::from(R2cpError::ForeignConnection);
        assert_eq!(
            e.to_string(),
            "engine configuration: datagram: foreign connection id"
        );
        let e = NetError::from(InsertError::NoSuchConnection);
        assert_eq!(e.to_string(), "engine configuration: no such connection");
        let e = NetError::from(tcp::OpenError::IsnOutOfRange(u64::MAX));
        assert!(matches!(e, NetError::Tcp(tcp::OpenError::IsnOutOfRange(_))));
        assert_eq!(
            NetError::RequestTooLarge.to_string(),
            "engine configuration: the request does not fit the send buffer"
        );
    }
}
