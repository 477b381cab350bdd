"""roam from Python: run scenarios and sweeps of the roam simulator, results as pandas DataFrames.

The functions call the same Rust code as the ``roam`` command line (``roam sim``, ``roam sweep``,
``roam reproduce``), so a result is the same whichever front end produced it: the DataFrames are
the CSV files the CLI writes (same columns, units in the column names), read with pandas.

A *scenario* is one of:

- a path (``pathlib.Path``, or a ``str`` on one line ending in ``.toml``) to a TOML file;
- TOML text (any other ``str``);
- a ``dict`` with the structure of the TOML file.

Overrides (``set=``) are ``roam sim --set KEY=VALUE``: dotted keys, values as on the command
line (numbers and booleans are written as TOML writes them; strings such as ``"30s"`` as they
are). Errors are :class:`RoamError` with the CLI's message.

See ``docs/PYTHON.md`` in the repository.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _roam
from ._roam import RoamError

__all__ = [
    "RoamError",
    "SimResult",
    "Reproduction",
    "sim",
    "sweep",
    "sweep_tables",
    "reproduce",
    "experiments",
]

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]

#: The tables ``roam sweep`` writes, by the name :func:`sweep` takes (``table=``).
SWEEP_TABLES = ("flows", "runs", "sweep", "sweep_flows")


def _source(scenario: Scenario) -> Tuple[str, Any]:
    if isinstance(scenario, Mapping):
        return "dict", dict(scenario)
    if isinstance(scenario, os.PathLike):
        return "file", os.fspath(scenario)
    if isinstance(scenario, str):
        one_line = "\n" not in scenario
        if one_line and scenario.strip().endswith(".toml"):
            return "file", scenario.strip()
        return "toml", scenario
    raise TypeError(
        f"scenario: a path, TOML text or a dict, not {type(scenario).__name__}"
    )


def _value(v: Any) -> str:
    """A value as ``--set KEY=VALUE`` takes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return repr(v)
    raise TypeError(f"override value {v!r}: use str, int, float or bool")


def _overrides(set: Optional[Mapping[str, Any]]) -> List[Tuple[str, str]]:
    return [(str(k), _value(v)) for k, v in (set or {}).items()]


# Every number exactly as the CSV (and the simulator) has it: pandas 3 parses floats exactly by
# default (and deprecates the option); pandas 2 needs float_precision="round_trip".
_EXACT = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def _frame(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), **_EXACT)


@dataclass
class SimResult:
    """The outcome of :func:`sim`: what ``roam sim`` writes into its output folder."""

    #: ``flows.csv``: one row per flow (``scenario``, ``seed``, then every field of the flow's
    #: result: ``goodput_bps``, ``completion_s``, …).
    flows: pd.DataFrame
    #: ``series.csv``: one row per flow and time bin (``flow``, ``time_s``,
    #: ``throughput_bps``, ``cwnd_bytes``, ``seq``).
    series: pd.DataFrame
    #: ``links.csv``: one row per link direction (packets, bytes, drops, utilization).
    links: pd.DataFrame
    #: ``result.json`` (``roam sim --format json``) as a dict: flows, aggregate, jain_index,
    #: events, warnings, …
    summary: Dict[str, Any]
    #: The run's warnings (also in ``summary["warnings"]``).
    warnings: List[str]
    #: The CSV files' text by file name (``flows.csv``, ``series.csv``, ``links.csv``) and
    #: ``result.json``: byte-identical to the files ``roam sim`` writes.
    files: Dict[str, str] = field(repr=False)


def sim(
    scenario: Scenario,
    set: Optional[Mapping[str, Any]] = None,
    seed: Optional[int] = None,
) -> SimResult:
    """Run one scenario, as ``roam sim FILE --set KEY=VALUE ... --seed N``.

    The simulator runs with the GIL released (other Python threads go on).

    >>> r = roam.sim("scenarios/validation/dumbbell-single.toml", set={"run.duration": "10s"})
    >>> r.flows[["id", "goodput_bps"]]
    """
    kind, value = _source(scenario)
    result_json, flows, series, links, warnings = _roam.sim(
        kind, value, _overrides(set), seed
    )
    return SimResult(
        flows=_frame(flows),
        series=_frame(series),
        links=_frame(links),
        summary=json.loads(result_json),
        warnings=list(warnings),
        files={
            "result.json": result_json,
            "flows.csv": flows,
            "series.csv": series,
            "links.csv": links,
        },
    )


def _grid(grid: Optional[Mapping[str, Any]]) -> List[Tuple[str, List[str]]]:
    out = []
    for k, values in (grid or {}).items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            values = [values]
        out.append((str(k), [_value(v) for v in values]))
    return out


def _run_job(spec: str, index: int) -> str:
    """One Dask task: run job ``index`` of a sweep, return its run record (JSON text)."""
    return _roam.sweep_run_job(spec, index)


def _spec(spec: str) -> str:
    """A Dask task holding the sweep's spec once (the runs depend on it)."""
    return spec


def sweep_tables(
    scenario: Scenario,
    grid: Optional[Mapping[str, Any]] = None,
    seeds: int = 1,
    set: Optional[Mapping[str, Any]] = None,
    client: Any = None,
    threads: Optional[int] = None,
    progress: bool = False,
) -> Dict[str, str]:
    """Run a sweep and return the CSV text of every table ``roam sweep`` writes, by file name
    (``sweep.csv``, ``sweep_flows.csv``, ``runs.csv``, ``flows.csv``): byte-identical to its
    files, whether the runs ran here or on a Dask cluster. Arguments as :func:`sweep`."""
    kind, value = _source(scenario)
    spec = _roam.sweep_spec(kind, value, _overrides(set), _grid(grid), int(seeds))
    if client is None:
        files, _warnings = _roam.sweep_local(spec, threads)
    else:
        n = _roam.sweep_jobs(spec)
        # The spec travels once, as a task of its own (not scattered data: a task is recomputed
        # when the worker holding its result dies). Then one task per run (grid point x seed).
        # pure=True: keys are hashes of the arguments, so the same run is never computed twice;
        # a task on a worker that dies is rescheduled by the scheduler
        # (distributed.scheduler.allowed-failures times).
        spec_task = client.submit(_spec, spec, pure=True)
        futures = client.map(_run_job, [spec_task] * n, range(n), pure=True)
        if progress:
            from distributed import progress as dask_progress

            dask_progress(futures)
        records = client.gather(futures)
        files, _warnings = _roam.sweep_assemble(spec, list(records))
    return dict(files)


def sweep(
    scenario: Scenario,
    grid: Optional[Mapping[str, Any]] = None,
    seeds: int = 1,
    set: Optional[Mapping[str, Any]] = None,
    client: Any = None,
    table: str = "flows",
    threads: Optional[int] = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run a sweep, as ``roam sweep FILE --param KEY=V1,V2 ... --seeds N --set KEY=VALUE``, and
    return one of its tidy long tables as a DataFrame.

    ``grid`` maps each swept key to its values (the grid is their product, the first key
    varying slowest); every grid point runs with seeds 1..``seeds``; ``set`` are fixed
    overrides. ``table`` picks the table (the CSV file of the same name ``roam sweep`` writes):

    - ``"flows"`` (default): one row per run x flow: the swept keys, ``scenario``, ``seed`` and
      every field of the flow's result (``goodput_bps``, ``completion_s``, ...);
    - ``"runs"``: one row per run: the swept keys, ``seed`` and the run-level metrics;
    - ``"sweep"``: one row per grid point: means and 95 % CI half-widths over the seeds;
    - ``"sweep_flows"``: one row per grid point x flow.

    The swept keys' columns hold the values as strings, as in the CSV (``"0.01"``).

    With ``client`` (a ``dask.distributed.Client``) every run is one Dask task; the table is
    byte-identical to a local sweep's. ``progress=True`` shows Dask's progress bar (the
    dashboard shows the tasks too). Without it the runs share ``threads`` threads (default: all
    cores), with the GIL released.
    """
    if table not in SWEEP_TABLES:
        raise ValueError(f"table={table!r}: one of {', '.join(SWEEP_TABLES)}")
    files = sweep_tables(scenario, grid, seeds, set, client, threads, progress)
    keys = [k for k, _ in _grid(grid)]
    text = files[f"{table}.csv"]
    return pd.read_csv(
        io.StringIO(text),
        dtype={k: str for k in keys},
        keep_default_na=False,
        na_values=[""],
        **_EXACT,
    )


@dataclass
class Reproduction:
    """The outcome of :func:`reproduce`."""

    #: The folder of its files (``report.md``, ``claims.json``, ``tables/*.csv``, plots).
    dir: Path
    #: ``claims.json``: one dict per claim (``id``, ``claim``, ``ours``, ``paper``, ``holds``,
    #: ``verdict``, ``note``).
    claims: List[Dict[str, Any]]
    #: The one-line verdict ``roam reproduce`` prints.
    verdict: str

    @property
    def report(self) -> Path:
        """``report.md``."""
        return self.dir / "report.md"

    def claims_frame(self) -> pd.DataFrame:
        """The claims as a DataFrame (one row per claim)."""
        return pd.DataFrame(self.claims)


def reproduce(
    name: str,
    quick: bool = False,
    root: Union[str, "os.PathLike[str]", None] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
) -> Reproduction:
    """Run a paper's experiments, as ``roam reproduce NAME [--quick] [--root DIR] [--out DIR]``.

    ``root`` is the repository (default: found from the current folder); ``out`` the output
    folder (default: ``results/NAME`` in the repository).
    """
    out_dir, claims_json, verdict = _roam.reproduce(
        name,
        bool(quick),
        None if root is None else os.fspath(root),
        None if out is None else os.fspath(out),
    )
    return Reproduction(dir=Path(out_dir), claims=json.loads(claims_json), verdict=verdict)


def experiments() -> Dict[str, str]:
    """The experiments :func:`reproduce` knows: name -> title (``roam reproduce --list``)."""
    return dict(_roam.experiments())
