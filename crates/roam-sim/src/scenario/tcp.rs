//! The `[flow.tcp]` table and `cc` name of TCP flows, checked at load time so that a run
//! cannot fail later (its agents: `agents::tcp::build`).

use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::tcp::TcpConfig;
use serde::Deserialize;
use toml::Value;

use super::wording;

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
