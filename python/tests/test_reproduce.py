"""roam.reproduce: the same claims as `roam reproduce`."""

import json

import pytest

import roam


def test_reproduce_gives_the_clis_claims(root, cli, tmp_path):
    cli("reproduce", "probing", "--quick", "--out", tmp_path / "cli", "-q")
    rep = roam.reproduce("probing", quick=True, root=root, out=tmp_path / "py")
    expected = (tmp_path / "cli" / "claims.json").read_text()
    assert (rep.dir / "claims.json").read_text() == expected
    assert rep.claims == json.loads(expected)
    assert rep.report.is_file()
    assert "claims hold" in rep.verdict
    frame = rep.claims_frame()
    assert list(frame["id"]) == [c["id"] for c in rep.claims]
    assert {"id", "claim", "verdict", "holds"} <= set(frame.columns)


def test_experiments_and_unknown_names():
    assert "probing" in roam.experiments()
    with pytest.raises(roam.RoamError, match=r'unknown experiment "nope" \(known: probing'):
        roam.reproduce("nope")
