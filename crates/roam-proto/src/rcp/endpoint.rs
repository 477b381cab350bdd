//! The RCP engines as endpoint connections ([`EndpointConnection`]): one connection id each,
//! on [`PathId::PRIMARY`] (R²CP's receiver will list one id and path per pipe).

use roam_wire::ConnId;

use super::{RcpReceiver, RcpSender, RxState, TxState};
use crate::endpoint::{EndpointConnection, Outgoing, PathId};
use crate::Time;

impl EndpointConnection for RcpReceiver {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.push((self.conn_id(), PathId::PRIMARY));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        // Errors are foreign or malformed datagrams, already ignored.
        let _ = RcpReceiver::handle_datagram(self, now, datagram);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        RcpReceiver::poll_transmit(self, now, buf).map(|len| Outgoing {
            path: PathId::PRIMARY,
            len,
            more: true,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        RcpReceiver::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Time) {
        RcpReceiver::handle_timeout(self, now);
    }

    /// Closed, with every byte read and every event taken by the application.
    fn is_drained(&self) -> bool {
        self.state() == RxState::Closed && self.readable() == 0 && !self.has_events()
    }

    fn memory_bound(&self) -> usize {
        RcpReceiver::memory_bound(self)
    }
}

impl EndpointConnection for RcpSender {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.push((self.conn_id(), PathId::PRIMARY));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        let _ = RcpSender::handle_datagram(self, now, datagram);
    }

    /// DATA to send; the application serves [`RcpSender::poll_read`] beside it when its store
    /// reads through the host.
    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        RcpSender::poll_transmit(self, now, buf).map(|len| Outgoing {
            path: PathId::PRIMARY,
            len,
            more: true,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        RcpSender::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Time) {
        RcpSender::handle_timeout(self, now);
    }

    fn is_drained(&self) -> bool {
        self.is_expired()
    }

    /// Closed (FIN answered, reset or aborted): only the linger remains.
    fn is_finished(&self) -> bool {
        self.state() != TxState::Established
    }

    fn memory_bound(&self) -> usize {
        RcpSender::memory_bound(self)
    }
}
