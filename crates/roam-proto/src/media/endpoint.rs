//! The media engines as endpoint connections ([`EndpointConnection`]): one connection id each,
//! on [`PathId::PRIMARY`].

use roam_wire::ConnId;

use super::{MediaReceiver, MediaSender};
use crate::endpoint::{EndpointConnection, Outgoing, PathId};
use crate::Time;

fn primary(len: Option<usize>) -> Option<Outgoing> {
    len.map(|len| Outgoing {
        path: PathId::PRIMARY,
        len,
        more: true,
    })
}

impl EndpointConnection for MediaSender {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.push((self.conn_id(), PathId::PRIMARY));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        let _ = MediaSender::handle_datagram(self, now, datagram);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        buf.clear();
        primary(MediaSender::poll_transmit(self, now, buf))
    }

    fn poll_timeout(&self) -> Option<Time> {
        MediaSender::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Time) {
        MediaSender::handle_timeout(self, now);
    }

    fn is_drained(&self) -> bool {
        self.is_stopped()
    }

    fn memory_bound(&self) -> usize {
        MediaSender::memory_bound(self)
    }
}

impl EndpointConnection for MediaReceiver {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.push((self.conn_id(), PathId::PRIMARY));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        let _ = MediaReceiver::handle_datagram(self, now, datagram);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        buf.clear();
        primary(MediaReceiver::poll_transmit(self, now, buf))
    }

    fn poll_timeout(&self) -> Option<Time> {
        MediaReceiver::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Time) {
        MediaReceiver::handle_timeout(self, now);
    }

    fn is_drained(&self) -> bool {
        self.is_expired() && self.pending_reports() == 0
    }

    fn memory_bound(&self) -> usize {
        MediaReceiver::memory_bound(self)
    }
}
