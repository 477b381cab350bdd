"""Shared fixtures: the repository root and the roam CLI binary the Python results are compared
with (``ROAM_BIN``, else the first of target/ci/roam, target/release/roam, target/debug/roam;
scripts/test-all.sh builds target/ci/roam before it runs pytest)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def roam_bin() -> Path:
    given = os.environ.get("ROAM_BIN")
    candidates = [Path(given)] if given else [
        ROOT / "target" / p / "roam" for p in ("ci", "release", "debug")
    ]
    for c in candidates:
        if c.is_file():
            return c
    pytest.fail(
        "no roam binary to compare with: build one (cargo build --profile ci -p roam) "
        "or set ROAM_BIN"
    )


@pytest.fixture(scope="session")
def cli(roam_bin):
    """Runs the roam CLI; returns the CompletedProcess (text)."""

    def run(*args, check=True, cwd=None):
        p = subprocess.run(
            [str(roam_bin), *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd or ROOT,
        )
        if check and p.returncode != 0:
            raise AssertionError(f"roam {' '.join(map(str, args))} failed: {p.stderr}")
        return p

    return run
