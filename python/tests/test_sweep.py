"""roam.sweep without a cluster: the same tables as `roam sweep`, byte for byte."""

import pandas as pd
import pytest

import roam

SCENARIO = "scenarios/validation/dumbbell-lossy.toml"
GRID = {"link.bottleneck.forward.loss": [0, 0.01]}
SET = {"run.duration": "5s"}


def test_same_tables_via_python_and_the_cli(root, cli, tmp_path):
    out = tmp_path / "cli"
    cli("sweep", root / SCENARIO, "--param", "link.bottleneck.forward.loss=0,0.01",
        "--seeds", "2", "--set", "run.duration=5s", "--out", out, "-q")
    files = roam.sweep_tables(root / SCENARIO, grid=GRID, seeds=2, set=SET)
    assert sorted(files) == ["flows.csv", "runs.csv", "sweep.csv", "sweep_flows.csv"]
    for name, text in files.items():
        assert text == (out / name).read_text(), name
    for table in roam.SWEEP_TABLES:
        df = roam.sweep(root / SCENARIO, grid=GRID, seeds=2, set=SET, table=table, threads=1)
        expected = pd.read_csv(out / f"{table}.csv",
                               dtype={"link.bottleneck.forward.loss": str}, **roam._EXACT)
        pd.testing.assert_frame_equal(df, expected)


def test_the_long_table(root):
    df = roam.sweep(root / SCENARIO, grid=GRID, seeds=2, set=SET)
    flows = df["id"].nunique()
    assert len(df) == 2 * 2 * flows, "one row per grid point x seed x flow"
    assert list(df["link.bottleneck.forward.loss"].unique()) == ["0", "0.01"]
    assert sorted(df["seed"].unique()) == [1, 2]
    mean = df.groupby("link.bottleneck.forward.loss")["goodput_bps"].mean()
    assert mean["0"] > mean["0.01"], "loss lowers goodput"


def test_sweep_errors_are_the_clis(root):
    with pytest.raises(roam.RoamError, match="seeds are swept with --seeds"):
        roam.sweep(root / SCENARIO, grid=GRID, set={"run.seed": 4})
    with pytest.raises(roam.RoamError, match="is both --set and --param"):
        roam.sweep(root / SCENARIO, grid=GRID, set={"link.bottleneck.forward.loss": 0})
    with pytest.raises(roam.RoamError, match="link.nope"):
        roam.sweep(root / SCENARIO, grid={"link.nope.delay": ["1ms"]})
    with pytest.raises(ValueError, match="table="):
        roam.sweep(root / SCENARIO, table="nope")
