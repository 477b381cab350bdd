//! A reader for one TOML table that names every field in its errors and rejects unknown keys
//! (so typos are caught), in the spirit of serde's `deny_unknown_fields`.

use std::time::Duration;

use toml::{Table, Value};

use super::units::{self, QueueLimit};
use super::wording;

/// A reference to one of a host's interfaces: its index or the name of the attached link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IfaceRef {
    Index(u32),
    Link(String),
}

/// Conversion of one TOML value, with a message (not naming the field) on failure.
pub(crate) trait FromField: Sized {
    fn from_field(v: &Value) -> Result<Self, String>;
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a datetime",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

impl FromField for String {
    fn from_field(v: &Value) -> Result<Self, String> {
        match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!("expected a string, got {}", type_name(other))),
        }
    }
}

impl FromField for bool {
    fn from_field(v: &Value) -> Result<Self, String> {
        match v {
            Value::Boolean(b) => Ok(*b),
            other => Err(format!("expected true or false, got {}", type_name(other))),
        }
    }
}

impl FromField for u64 {
    fn from_field(v: &Value) -> Result<Self, String> {
        match v {
            Value::Integer(i) if *i >= 0 => Ok(*i as u64),
            other => Err(format!("expected a non-negative integer, got {other}")),
        }
    }
}

impl FromField for f64 {
    fn from_field(v: &Value) -> Result<Self, String> {
        match v {
            Value::Integer(i) => Ok(*i as f64),
            Value::Float(f) if f.is_finite() => Ok(*f),
            other => Err(format!("expected a number, got {other}")),
        }
    }
}

impl FromField for Duration {
    fn from_field(v: &Value) -> Result<Self, String> {
        units::duration(v)
    }
}

impl FromField for QueueLimit {
    fn from_field(v: &Value) -> Result<Self, String> {
        units::queue(v)
    }
}

impl FromField for IfaceRef {
    fn from_field(v: &Value) -> Result<Self, String> {
        match v {
            Value::Integer(i) => u32::try_from(*i)
                .map(IfaceRef::Index)
                .map_err(|_| format!("expected an interface index (0 or more), got {i}")),
            Value::String(s) => Ok(IfaceRef::Link(s.clone())),
            other => Err(format!(
                "expected an interface index or a link name, got {}",
                type_name(other)
            )),
        }
    }
}

impl FromField for Value {
    fn from_field(v: &Value) -> Result<Self, String> {
        Ok(v.clone())
    }
}

/// Marker types selecting a unit parser for [`Fields::get_with`].
pub(crate) type Parser<T> = fn(&Value) -> Result<T, String>;

/// One table being read. `ctx` names the entry (`link "bottleneck"`), `prefix` the path inside
/// it (`forward.`).
pub(crate) struct Fields {
    ctx: String,
    prefix: String,
    table: Table,
    known: Vec<&'static str>,
}

impl Fields {
    /// Starts reading `value`, which must be a table.
    pub(crate) fn new(value: Value, ctx: &str, prefix: &str) -> Result<Fields, String> {
        match value {
            Value::Table(table) => Ok(Fields {
                ctx: ctx.to_string(),
                prefix: prefix.to_string(),
                table,
                known: Vec::new(),
            }),
            other => Err(format!(
                "{}expected a table, got {}",
                Self::join(ctx, prefix.trim_end_matches('.'), ""),
                type_name(&other)
            )),
        }
    }

    fn join(ctx: &str, path: &str, msg: &str) -> String {
        let mut s = String::new();
        if !ctx.is_empty() {
            s.push_str(ctx);
            s.push_str(": ");
        }
        if !path.is_empty() {
            s.push_str(path);
            s.push_str(": ");
        }
        s.push_str(msg);
        s
    }

    /// An error about field `key` of this table.
    pub(crate) fn err(&self, key: &str, msg: impl std::fmt::Display) -> String {
        Self::join(
            &self.ctx,
            &format!("{}{key}", self.prefix),
            &msg.to_string(),
        )
    }

    /// An error about the entry as a whole.
    pub(crate) fn err_entry(&self, msg: impl std::fmt::Display) -> String {
        Self::join(
            &self.ctx,
            self.prefix.trim_end_matches('.'),
            &msg.to_string(),
        )
    }

    /// Removes and converts an optional field.
    pub(crate) fn get<T: FromField>(&mut self, key: &'static str) -> Result<Option<T>, String> {
        self.get_with(key, T::from_field)
    }

    /// Removes and converts an optional field with an explicit parser.
    pub(crate) fn get_with<T>(
        &mut self,
        key: &'static str,
        parse: Parser<T>,
    ) -> Result<Option<T>, String> {
        self.known.push(key);
        match self.table.remove(key) {
            None => Ok(None),
            Some(v) => parse(&v).map(Some).map_err(|m| self.err(key, m)),
        }
    }

    /// Removes and converts a required field.
    pub(crate) fn req<T: FromField>(&mut self, key: &'static str) -> Result<T, String> {
        self.get(key)?.ok_or_else(|| self.missing(key))
    }

    /// Removes a required field with an explicit parser.
    pub(crate) fn req_with<T>(&mut self, key: &'static str, parse: Parser<T>) -> Result<T, String> {
        self.get_with(key, parse)?.ok_or_else(|| self.missing(key))
    }

    /// The error for a required field `key` that is absent, naming the unread key that looks
    /// like a misspelling of it (`protocl` for `protocol`).
    pub(crate) fn missing(&self, key: &str) -> String {
        self.err(
            key,
            wording::missing(key, self.table.keys().map(String::as_str)),
        )
    }

    /// Removes an optional sub-table and starts reading it.
    pub(crate) fn sub(&mut self, key: &'static str) -> Result<Option<Fields>, String> {
        self.known.push(key);
        match self.table.remove(key) {
            None => Ok(None),
            Some(v) => Fields::new(v, &self.ctx, &format!("{}{key}.", self.prefix)).map(Some),
        }
    }

    /// Removes an optional array of tables and starts reading each element.
    pub(crate) fn sub_array(&mut self, key: &'static str) -> Result<Vec<Fields>, String> {
        self.known.push(key);
        match self.table.remove(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| Fields::new(v, &self.ctx, &format!("{}{key}[{i}].", self.prefix)))
                .collect(),
            Some(other) => Err(self.err(
                key,
                format!("expected an array of tables, got {}", type_name(&other)),
            )),
        }
    }

    /// Fails if any key was not read.
    pub(crate) fn finish(self) -> Result<(), String> {
        if let Some(key) = self.table.keys().next() {
            return Err(Self::join(
                &self.ctx,
                &format!("{}{key}", self.prefix),
                &wording::unknown_field(key, &self.known),
            ));
        }
        Ok(())
    }
}

/// A flow's engine table (`[flow.<section>]`) as given, or an empty one when absent.
pub(crate) fn engine_table(section: &str, table: Option<Value>) -> Result<Table, String> {
    match table {
        None => Ok(Table::new()),
        Some(Value::Table(t)) => Ok(t),
        Some(_) => Err(format!("{section}: expected a table")),
    }
}

/// The engine configuration `T` an engine table (`[flow.<section>]`) gives. An error is
/// attributed to the first field that fails on its own (`<section>.<field>: …`), else to the
/// table (`<section>: …`).
pub(crate) fn engine_config<T: serde::de::DeserializeOwned>(
    section: &str,
    table: &Table,
) -> Result<T, String> {
    T::deserialize(Value::Table(table.clone())).map_err(|e| {
        for (k, v) in table {
            let mut one = Table::new();
            one.insert(k.clone(), v.clone());
            if let Err(e1) = T::deserialize(Value::Table(one)) {
                return format!("{section}.{k}: {}", wording::serde_message(&e1.to_string()));
            }
        }
        format!("{section}: {}", wording::serde_message(&e.to_string()))
    })
}
