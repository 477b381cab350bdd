//! The `[flow.http]` table of HTTP-like flows (`protocol = "http"`):
//!
//! ```toml
//! [[flow]]
//! protocol = "http"
//! from = "server"
//! to = "client"
//! cross = true
//! [flow.http]
//! mean_response = "12KB"   # mean Pareto response size (default 12 KB)
//! shape = 1.2              # Pareto shape, > 1 (default 1.2)
//! think = "1s"             # mean exponential think time (default 1 s)
//! ```

use std::time::Duration;

use toml::Value;

use super::units;
use crate::agents::http::HttpParams;

/// Checks the `[flow.http]` table. Messages start with the field.
pub(crate) fn parse(table: Option<Value>) -> Result<HttpParams, String> {
    let mut p = HttpParams::default();
    let table = match table {
        None => return Ok(p),
        Some(Value::Table(t)) => t,
        Some(_) => return Err("http: expected a table".into()),
    };
    for (k, v) in &table {
        match k.as_str() {
            "mean_response" => {
                let n = units::size(v).map_err(|e| format!("http.mean_response: {e}"))?;
                if n == 0 {
                    return Err("http.mean_response: must be positive".into());
                }
                p.mean_response = n;
            }
            "shape" => {
                let s = v.as_float().or(v.as_integer().map(|i| i as f64));
                match s {
                    Some(s) if s > 1.0 && s <= 100.0 => p.shape = s,
                    _ => return Err("http.shape: expected a number in (1, 100]".into()),
                }
            }
            "think" => {
                let d: Duration = units::duration(v).map_err(|e| format!("http.think: {e}"))?;
                p.think = d;
            }
            other => {
                return Err(format!(
                    "http.{other}: unknown field (expected mean_response, shape, think)"
                ))
            }
        }
    }
    Ok(p)
}
