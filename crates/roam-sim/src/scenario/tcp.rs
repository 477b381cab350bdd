//! The `[flow.tcp]` table and `cc` name of TCP flows, checked at load time so that a run
//! cannot fail later; and the construction of a TCP flow's two agents.

use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::tcp::TcpConfig;
use serde::Deserialize;
use toml::Value;

use super::wording;

use crate::agent::{Agent, FlowIdx, IfaceIdx, SockAddr};
use crate::agents::tcp::{tcp_receiver, tcp_sender};

/// How to build the two endpoints of a TCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpSetup {
    /// Congestion controller name as written (e.g. `newreno`).
    pub cc: String,
    /// The congestion controller.
    pub cc_kind: CcKind,
    /// Engine options from the `[flow.tcp]` table.
    pub config: Arc<TcpConfig>,
}

/// Checks the `cc` name and the `[flow.tcp]` table of a TCP flow. Messages start with the
/// field (`cc: …`, `tcp.sack: …`).
pub(crate) fn parse(cc: Option<String>, table: Option<Value>) -> Result<TcpSetup, String> {
    let cc = cc.unwrap_or_else(|| "newreno".to_string());
    let cc_kind: CcKind = cc.parse().map_err(|e| format!("cc: {e}"))?;
    let table = match table {
        None => toml::Table::new(),
        Some(Value::Table(t)) => t,
        Some(_) => return Err("tcp: expected a table".into()),
    };
    let config = TcpConfig::deserialize(Value::Table(table.clone())).map_err(|e| {
        // Attribute the error to the first field that fails on its own.
        for (k, v) in &table {
            let mut one = toml::Table::new();
            one.insert(k.clone(), v.clone());
            if let Err(e1) = TcpConfig::deserialize(Value::Table(one)) {
                return format!("tcp.{k}: {}", wording::serde_message(&e1.to_string()));
            }
        }
        format!("tcp: {}", wording::serde_message(&e.to_string()))
    })?;
    config.validate().map_err(|e| format!("tcp.{e}"))?;
    Ok(TcpSetup {
        cc,
        cc_kind,
        config: Arc::new(config),
    })
}

/// Where a TCP flow's endpoints live.
pub(crate) struct TcpEnds {
    pub flow: FlowIdx,
    pub sender_iface: IfaceIdx,
    pub sender_port: u16,
    pub receiver_iface: IfaceIdx,
    pub receiver_port: u16,
    pub peer: SockAddr,
    pub size: Option<u64>,
    pub conn_seed: u64,
}

/// Builds the (sender, receiver) agents of a TCP flow.
pub(crate) fn agents(setup: &TcpSetup, e: &TcpEnds) -> (Box<dyn Agent>, Box<dyn Agent>) {
    let sender = tcp_sender(
        e.flow,
        Arc::clone(&setup.config),
        setup.cc_kind,
        e.sender_iface,
        e.sender_port,
        e.peer,
        e.size,
        e.conn_seed,
    );
    let receiver = tcp_receiver(
        e.flow,
        Arc::clone(&setup.config),
        e.receiver_iface,
        e.receiver_port,
    );
    (sender, receiver)
}
