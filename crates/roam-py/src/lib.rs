//! `roam._roam`: the native module of roam's Python package (`python/`). Thin: each function
//! converts its arguments, calls [`roam::api`] with the GIL released, and turns a
//! [`roam::CliError`] into `roam.RoamError` carrying the CLI's message. The Python layer
//! (`python/src/roam/__init__.py`) reads the returned CSV text into pandas DataFrames.

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use roam::api::{self, Source};

create_exception!(
    _roam,
    RoamError,
    PyException,
    "A roam error: the same message as the roam command line prints."
);

fn err(e: roam::CliError) -> PyErr {
    RoamError::new_err(e.to_string())
}

/// A Python value (a dict from `roam.sim(dict)`) as a TOML value; `at` is its dotted path.
fn to_toml(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    let name = if at.is_empty() { "the scenario" } else { at };
    if obj.is_instance_of::<PyBool>() {
        Ok(toml::Value::Boolean(obj.extract()?))
    } else if obj.is_instance_of::<PyInt>() {
        let i: i64 = obj.extract().map_err(|_| {
            PyTypeError::new_err(format!("{name}: integer out of TOML's range (64-bit)"))
        })?;
        Ok(toml::Value::Integer(i))
    } else if obj.is_instance_of::<PyFloat>() {
        Ok(toml::Value::Float(obj.extract()?))
    } else if obj.is_instance_of::<PyString>() {
        Ok(toml::Value::String(obj.extract()?))
    } else if let Ok(d) = obj.cast::<PyDict>() {
        let mut table = toml::Table::new();
        for (k, v) in d.iter() {
            let key: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!("{name}: keys must be strings, got {k}"))
            })?;
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            table.insert(key, to_toml(&v, &path)?);
        }
        Ok(toml::Value::Table(table))
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for (i, v) in obj.try_iter()?.enumerate() {
            out.push(to_toml(&v?, &format!("{at}[{i}]"))?);
        }
        Ok(toml::Value::Array(out))
    } else {
        Err(PyTypeError::new_err(format!(
            "{name}: cannot put a {} into a scenario (use dict, list, str, int, float or bool)",
            obj.get_type().name()?
        )))
    }
}

/// The scenario argument: `("file", path)`, `("toml", text)` or `("dict", dict)`.
fn source(kind: &str, value: &Bound<'_, PyAny>) -> PyResult<Source> {
    match kind {
        "file" => Ok(Source::File(value.extract::<PathBuf>()?)),
        "toml" => Ok(Source::Toml {
            text: value.extract()?,
            origin: PathBuf::from("<string>"),
        }),
        "dict" => Ok(Source::Doc {
            doc: to_toml(value, "")?,
            origin: PathBuf::from("<dict>"),
        }),
        other => Err(PyTypeError::new_err(format!(
            "unknown scenario kind {other:?}"
        ))),
    }
}

/// Runs one scenario; returns `(result_json, flows_csv, series_csv, links_csv, warnings)`.
#[pyfunction]
#[pyo3(signature = (kind, scenario, set, seed=None))]
fn sim(
    py: Python<'_>,
    kind: &str,
    scenario: &Bound<'_, PyAny>,
    set: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<(String, String, String, String, Vec<String>)> {
    let src = source(kind, scenario)?;
    let t = py.detach(|| api::sim(src, &set, seed)).map_err(err)?;
    Ok((
        t.result_json,
        t.flows_csv,
        t.series_csv,
        t.links_csv,
        t.warnings,
    ))
}

/// Validates a sweep; returns its spec (JSON text).
#[pyfunction]
fn sweep_spec(
    py: Python<'_>,
    kind: &str,
    scenario: &Bound<'_, PyAny>,
    set: Vec<(String, String)>,
    grid: Vec<(String, Vec<String>)>,
    seeds: u64,
) -> PyResult<String> {
    let src = source(kind, scenario)?;
    py.detach(|| api::sweep_spec(src, &set, &grid, seeds))
        .map_err(err)
}

/// The number of runs of a sweep.
#[pyfunction]
fn sweep_jobs(spec: &str) -> PyResult<usize> {
    api::sweep_jobs(spec).map_err(err)
}

/// Runs job `index` of a sweep; returns its run record.
#[pyfunction]
fn sweep_run_job(py: Python<'_>, spec: &str, index: usize) -> PyResult<String> {
    py.detach(|| api::sweep_run_job(spec, index)).map_err(err)
}

/// A sweep's tables: `([(file name, CSV text)], warnings)`.
type Tables = (Vec<(String, String)>, Vec<String>);

/// The tables of a sweep from its run records: `([(file, csv)], warnings)`.
#[pyfunction]
fn sweep_assemble(py: Python<'_>, spec: &str, records: Vec<String>) -> PyResult<Tables> {
    let t = py
        .detach(|| api::sweep_assemble(spec, &records))
        .map_err(err)?;
    Ok((t.files, t.warnings))
}

/// Runs a whole sweep on a thread pool: `([(file, csv)], warnings)`.
#[pyfunction]
#[pyo3(signature = (spec, threads=None))]
fn sweep_local(py: Python<'_>, spec: &str, threads: Option<usize>) -> PyResult<Tables> {
    let t = py.detach(|| api::sweep_local(spec, threads)).map_err(err)?;
    Ok((t.files, t.warnings))
}

/// The experiments `roam reproduce` knows: `[(name, title)]`.
#[pyfunction]
fn experiments() -> Vec<(String, String)> {
    api::experiments()
}

/// Runs a reproduction; returns `(out_dir, claims_json, verdict)`.
#[pyfunction]
#[pyo3(signature = (name, quick, root=None, out=None))]
fn reproduce(
    py: Python<'_>,
    name: &str,
    quick: bool,
    root: Option<PathBuf>,
    out: Option<PathBuf>,
) -> PyResult<(PathBuf, String, String)> {
    let r = py
        .detach(|| api::reproduce(name, quick, root.as_deref(), out))
        .map_err(err)?;
    Ok((r.out_dir, r.claims_json, r.verdict))
}

/// The module.
#[pymodule]
fn _roam(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RoamError", m.py().get_type::<RoamError>())?;
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_spec, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_jobs, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run_job, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_assemble, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_local, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    Ok(())
}
