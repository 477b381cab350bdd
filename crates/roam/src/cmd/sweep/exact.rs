//! Serde helpers that carry an `f64` exactly through text: Rust's shortest round-trip form
//! (`to_string`, which is also what the CSV files hold) and `str::parse` back, so that a run's
//! numbers come back bit for bit from a shard file or a Dask worker — including `NaN` and
//! `inf`, which JSON numbers cannot hold.

use serde::{de::Error, Deserialize, Deserializer, Serializer};

/// `#[serde(with = "exact")]` for `f64`.
pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&x.to_string())
}

/// `#[serde(with = "exact")]` for `f64`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let text = String::deserialize(d)?;
    text.parse()
        .map_err(|_| D::Error::custom(format!("not a number: {text:?}")))
}

/// `#[serde(with = "exact::opt")]` for `Option<f64>`.
pub mod opt {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    /// Writes `None` as `null`, a number as [`super::serialize`] does.
    pub fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match x {
            Some(x) => s.serialize_some(&x.to_string()),
            None => s.serialize_none(),
        }
    }

    /// Reads what [`serialize`] wrote.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| {
                text.parse()
                    .map_err(|_| D::Error::custom(format!("not a number: {text:?}")))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Serialize, Deserialize)]
    struct T {
        #[serde(with = "super")]
        x: f64,
        #[serde(with = "super::opt")]
        y: Option<f64>,
    }

    #[test]
    fn every_float_comes_back_bit_for_bit() {
        let xs = [
            0.1 + 0.2,
            1.0 / 3.0,
            -0.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            1.234_567_890_123_456_7e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for x in xs {
            for y in [None, Some(x)] {
                let text = serde_json::to_string(&T { x, y }).unwrap();
                let back: T = serde_json::from_str(&text).unwrap();
                assert_eq!(back.x.to_bits(), x.to_bits(), "{text}");
                assert_eq!(back.y.map(f64::to_bits), y.map(f64::to_bits), "{text}");
            }
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(serde_json::from_str::<T>(r#"{"x":"abc","y":null}"#).is_err());
        assert!(serde_json::from_str::<T>(r#"{"x":1.5,"y":null}"#).is_err());
    }
}
