"""Type hints of the native module ``roam._roam`` (crates/roam-py). Use the ``roam`` package's
functions instead: they take friendlier arguments and return DataFrames."""

from typing import Any, List, Optional, Tuple

class RoamError(Exception):
    """A roam error: the same message as the roam command line prints."""

def sim(
    kind: str, scenario: Any, set: List[Tuple[str, str]], seed: Optional[int] = None
) -> Tuple[str, str, str, str, List[str]]:
    """Runs one scenario: ``(result_json, flows_csv, series_csv, links_csv, warnings)``."""

def sweep_spec(
    kind: str,
    scenario: Any,
    set: List[Tuple[str, str]],
    grid: List[Tuple[str, List[str]]],
    seeds: int,
) -> str:
    """Validates a sweep; returns its spec (JSON text)."""

def sweep_jobs(spec: str) -> int:
    """The number of runs of a sweep."""

def sweep_run_job(spec: str, index: int) -> str:
    """Runs job ``index`` of a sweep; returns its run record (JSON text)."""

def sweep_assemble(
    spec: str, records: List[str]
) -> Tuple[List[Tuple[str, str]], List[str]]:
    """The tables of a sweep from its run records: ``([(file, csv)], warnings)``."""

def sweep_local(
    spec: str, threads: Optional[int] = None
) -> Tuple[List[Tuple[str, str]], List[str]]:
    """Runs a whole sweep on a thread pool: ``([(file, csv)], warnings)``."""

def experiments() -> List[Tuple[str, str]]:
    """The experiments ``roam reproduce`` knows: ``[(name, title)]``."""

def reproduce(
    name: str, quick: bool, root: Optional[str] = None, out: Optional[str] = None
) -> Tuple[str, str, str]:
    """Runs a reproduction: ``(out_dir, claims_json, verdict)``."""
