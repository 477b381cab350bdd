//! The `[flow.rcp]` table and `cc` name of RCP flows (`protocol = "rcp"`), checked at load
//! time (its agents: `agents::rcp::build`).
//!
//! ```toml
//! [[flow]]
//! protocol = "rcp"
//! from = "server"          # the RCP sender (serves the object)
//! to = "mobile"            # the RCP receiver (opens the connection at `start`)
//! cc = "newreno"           # any shared controller, "stp" (RCP-STP) or "rate" (RCP-Rate), both receiver only
//! [flow.rcp]
//! eln = true               # per-hole ELN from wireless-corruption reports
//! sleep = true             # power management: sleep while the channel is bad (meters energy)
//! energy = true            # meter the receiver interface's energy without sleeping
//! facts = "oracle"         # or "estimated": the receiver judges each hole itself (Spike,
//!                          # roam_proto::loss_cause) instead of the link's corruption report;
//!                          # needs eln = true
//! idle_w = 1.15            # idle power of the energy model (W)
//! mss = 1000               # … and every other roam_proto::rcp::RcpConfig field
//! ```

use std::sync::Arc;

use roam_proto::rcp::{RcpCc, RcpConfig};
use toml::Value;

use super::fields;

use crate::agents::rcp::SleepPolicy;
use crate::energy::PowerModel;

/// How to build the two endpoints of an RCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct RcpSetup {
    /// Congestion controller name as written.
    pub cc: String,
    /// The receiver's controller.
    pub cc_kind: RcpCc,
    /// Engine options.
    pub config: Arc<RcpConfig>,
    /// Energy model of the receiver's interface, if metered.
    pub energy: Option<PowerModel>,
    /// Sleep policy of the receiver, if any.
    pub sleep: Option<SleepPolicy>,
    /// Wireless-loss facts estimated by the receiver (`facts = "estimated"`) instead of the
    /// link's oracle.
    pub estimated_facts: bool,
}

/// Checks the `cc` name and the `[flow.rcp]` table. Messages start with the field.
pub(crate) fn parse(cc: Option<String>, table: Option<Value>) -> Result<RcpSetup, String> {
    let cc = cc.unwrap_or_else(|| "newreno".to_string());
    let cc_kind: RcpCc = cc.parse().map_err(|e| format!("cc: {e}"))?;
    let mut table = fields::engine_table("rcp", table)?;
    let flag = |t: &mut toml::Table, key: &str| -> Result<bool, String> {
        match t.remove(key) {
            None => Ok(false),
            Some(Value::Boolean(b)) => Ok(b),
            Some(_) => Err(format!("rcp.{key}: expected true or false")),
        }
    };
    let sleep = flag(&mut table, "sleep")?;
    let estimated_facts = match table.remove("facts") {
        None => false,
        Some(Value::String(f)) if f == "oracle" => false,
        Some(Value::String(f)) if f == "estimated" => true,
        Some(_) => return Err("rcp.facts: expected \"oracle\" or \"estimated\"".into()),
    };
    let energy = flag(&mut table, "energy")?;
    let idle_w = match table.remove("idle_w") {
        None => None,
        Some(Value::Float(x)) if (0.0..=100.0).contains(&x) => Some(x),
        Some(Value::Integer(x)) if (0..=100).contains(&x) => Some(x as f64),
        Some(_) => return Err("rcp.idle_w: expected watts in [0, 100]".into()),
    };
    let config: RcpConfig = fields::engine_config("rcp", &table)?;
    config.validate().map_err(|e| format!("rcp.{e}"))?;
    if estimated_facts && !config.eln {
        return Err("rcp.facts: \"estimated\" feeds ELN; set eln = true".into());
    }
    let metered = sleep || energy || idle_w.is_some();
    let model = PowerModel {
        idle_w: idle_w.unwrap_or(PowerModel::default().idle_w),
        ..PowerModel::default()
    };
    Ok(RcpSetup {
        cc,
        cc_kind,
        config: Arc::new(config),
        energy: metered.then_some(model),
        sleep: sleep.then(SleepPolicy::default),
        estimated_facts,
    })
}

/// Parses a flow's `energy` key: `true` meters the receiver's interface with the 802.11b
/// model, `{ idle_w = 0.8 }` also sets the idle power.
pub(crate) fn parse_energy(v: Option<Value>) -> Result<Option<PowerModel>, String> {
    match v {
        None | Some(Value::Boolean(false)) => Ok(None),
        Some(Value::Boolean(true)) => Ok(Some(PowerModel::default())),
        Some(Value::Table(mut t)) => {
            let idle_w = match t.remove("idle_w") {
                None => PowerModel::default().idle_w,
                Some(Value::Float(x)) if (0.0..=100.0).contains(&x) => x,
                Some(Value::Integer(x)) if (0..=100).contains(&x) => x as f64,
                Some(_) => return Err("energy.idle_w: expected watts in [0, 100]".into()),
            };
            if let Some(k) = t.keys().next() {
                return Err(format!("energy.{k}: unknown field (expected idle_w)"));
            }
            Ok(Some(PowerModel {
                idle_w,
                ..PowerModel::default()
            }))
        }
        Some(_) => Err("energy: expected true/false or { idle_w = W }".into()),
    }
}
