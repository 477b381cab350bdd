"""roam.sim: the same tables as `roam sim`, scenarios from files, TOML text and dicts, the
CLI's error messages, and the GIL released while the simulator runs."""

import threading
import tomllib

import pandas as pd
import pytest

import roam

SCENARIO = "scenarios/examples/wireless-gilbert.toml"
SET = {"run.duration": "3s", "link.wireless.delay": "10ms"}


def test_same_numbers_via_python_and_the_cli(root, cli, tmp_path):
    out = tmp_path / "cli"
    cli("sim", root / SCENARIO, "--set", "run.duration=3s", "--set",
        "link.wireless.delay=10ms", "--seed", "3", "--out", out, "-q")
    r = roam.sim(root / SCENARIO, set=SET, seed=3)
    for name in ("flows.csv", "series.csv", "links.csv", "result.json"):
        assert r.files[name] == (out / name).read_text(), name
    for frame, name in ((r.flows, "flows.csv"), (r.series, "series.csv"),
                        (r.links, "links.csv")):
        expected = pd.read_csv(out / name, **roam._EXACT)
        pd.testing.assert_frame_equal(frame, expected)
        assert list(frame.columns) == list(expected.columns)
    assert r.summary["seed"] == 3
    assert r.flows.loc[0, "seed"] == 3
    assert "goodput_bps" in r.flows.columns and "throughput_bps" in r.series.columns
    assert r.summary["flows"][0]["goodput_bps"] == r.flows.loc[0, "goodput_bps"]


def test_file_text_and_dict_give_the_same_run(root):
    path = root / SCENARIO
    text = path.read_text()
    doc = tomllib.loads(text)
    a = roam.sim(path, set=SET)
    b = roam.sim(str(path), set=SET)
    c = roam.sim(text, set=SET)
    d = roam.sim(doc, set=SET)
    for other in (b, c, d):
        # The scenario sets its name, so even the flows' scenario column agrees.
        assert other.files == a.files


def test_errors_carry_the_cli_messages(root, cli, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((root / SCENARIO).read_text().replace("protocol =", "protocl ="))
    p = cli("sim", bad, "--out", tmp_path / "o", "-q", check=False)
    assert p.returncode != 0
    with pytest.raises(roam.RoamError) as e:
        roam.sim(bad)
    assert f"error: {e.value}" in p.stderr
    assert "protocl" in str(e.value)
    with pytest.raises(roam.RoamError, match="invalid TOML"):
        roam.sim("name = \n")
    with pytest.raises(roam.RoamError, match="with overrides run.duration=soon"):
        roam.sim(root / SCENARIO, set={"run.duration": "soon"})
    with pytest.raises(roam.RoamError, match="cannot read"):
        roam.sim("no-such-file.toml")
    with pytest.raises(TypeError, match="run.x"):
        roam.sim({"run": {"x": object()}})


def test_the_gil_is_released_while_the_simulator_runs(root):
    # If sim() held the GIL, this thread could not run a line of Python until it returned.
    done = threading.Event()
    ticks = 0

    def work():
        roam.sim(root / SCENARIO, set={"run.duration": "60s"})
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
    t.join()
    assert ticks > 10_000, ticks
