"""roam.sweep on a Dask cluster: every run a task on real worker processes; a worker killed in
the middle of the sweep; the table identical to a local sweep's."""

import os
import signal
import threading
import time

import pytest

import roam

distributed = pytest.importorskip("distributed")

# 20 flows: about half a second a run, so a worker can be killed while it runs one.
SCENARIO = "scenarios/validation/dumbbell-shared.toml"
GRID = {"link.bottleneck.forward.loss": [0, 0.005, 0.01]}
SET = {"run.duration": "200s"}
SEEDS = 3


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _scheduler_counts(dask_scheduler):
    done = sum(
        1 for k, ts in dask_scheduler.tasks.items()
        if str(k).startswith("_run_job") and ts.state == "memory"
    )
    return done, len(dask_scheduler.workers)


def test_a_sweep_on_dask_survives_a_killed_worker(root, client):
    local = roam.sweep_tables(root / SCENARIO, grid=GRID, seeds=SEEDS, set=SET)
    runs = len(GRID["link.bottleneck.forward.loss"]) * SEEDS

    result = {}

    def sweep():
        result["files"] = roam.sweep_tables(
            root / SCENARIO, grid=GRID, seeds=SEEDS, set=SET, client=client
        )

    t = threading.Thread(target=sweep)
    t.start()
    # Wait until some runs are done and some are running, then kill a busy worker's process.
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and t.is_alive():
        done, _ = client.run_on_scheduler(_scheduler_counts)
        busy = [w for w, keys in client.processing().items() if keys]
        if 1 <= done < runs - 2 and busy:
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed = (busy[0], done)
        time.sleep(0.02)
    t.join(timeout=300)
    assert not t.is_alive(), "the sweep did not finish"
    assert killed is not None, "the sweep ended before a worker could be killed"
    worker, done_at_kill = killed
    print(f"killed {worker} with {done_at_kill} of {runs} runs done")
    assert done_at_kill < runs
    assert worker not in client.scheduler_info()["workers"], "the killed worker is gone"
    assert result["files"] == local, "byte-identical to the local sweep"


def test_dask_and_local_frames_agree(root, client):
    grid = {"link.bottleneck.forward.loss": [0, 0.01]}
    a = roam.sweep(root / SCENARIO, grid=grid, seeds=2, set={"run.duration": "3s"},
                   client=client, table="flows")
    b = roam.sweep(root / SCENARIO, grid=grid, seeds=2, set={"run.duration": "3s"},
                   table="flows")
    assert a.equals(b)
