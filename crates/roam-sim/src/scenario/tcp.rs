//! The `[flow.tcp]` table and `cc` name of TCP flows, checked at load time so that a run
//! cannot fail later (its agents: `agents::tcp::build`).

use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::tcp::TcpConfig;
use toml::Value;

use super::fields;

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
    let table = fields::engine_table("tcp", table)?;
    let config: TcpConfig = fields::engine_config("tcp", &table)?;
    config.validate().map_err(|e| format!("tcp.{e}"))?;
    Ok(TcpSetup {
        cc,
        cc_kind,
        config: Arc::new(config),
    })
}
