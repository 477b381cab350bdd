//! The TCP hosts of a simulated flow, shared by the TCP and HTTP agents: a [`Host`] holding the
//! flow's one [`Connection`], accepting with a [`TcpAcceptor`] (SYN cookies) on the passive
//! opener's side and nothing on the active opener's.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use roam_proto::endpoint::{Acceptor, NoAcceptor, TokenKey};
use roam_proto::tcp::{Connection, TcpAcceptor};

use super::host::Host;
use crate::agent::{FlowIdx, IfaceIdx};
use crate::rng::derived_rng;

/// The active opener's host: it accepts nothing.
pub(crate) type ActiveHost = Host<(), NoAcceptor<Connection>>;
/// The passive opener's host: SYN cookies.
pub(crate) type PassiveHost = Host<(), TcpAcceptor>;

/// A TCP host's SYN-cookie key: from the `tcp:token` stream derived from the agent's own.
fn tcp_token_key(agent_rng: &ChaCha8Rng) -> TokenKey {
    TokenKey::new(derived_rng(agent_rng, "tcp:token").gen())
}

impl<P: Acceptor<Connection = Connection>> Host<(), P> {
    /// A TCP host sending from `iface`, `port` for `flow`, accepting with `acceptor`.
    pub(crate) fn new(iface: IfaceIdx, port: u16, flow: FlowIdx, acceptor: Option<P>) -> Self {
        Host::keyed((iface, port, flow), acceptor, tcp_token_key)
    }
}
