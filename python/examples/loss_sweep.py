"""Sweep the bottleneck's loss rate of the lossy validation dumbbell and plot goodput.

Run from the repository root, with the package installed (``pip install ./python``):

    python python/examples/loss_sweep.py [--seeds 5] [--out goodput.png] [--dask]

Prints goodput per loss rate (mean over the seeds, in Mb/s) and, when matplotlib is installed,
plots it with one line per flow. ``--dask`` runs the sweep on a local Dask cluster instead of
this process's threads (the numbers are the same).
"""

import argparse
from pathlib import Path

import roam

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "validation" / "dumbbell-lossy.toml"
KEY = "link.bottleneck.forward.loss"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--out", default="goodput.png")
    ap.add_argument("--dask", action="store_true")
    args = ap.parse_args()

    losses = [0, 0.001, 0.002, 0.005, 0.01, 0.02]
    client = None
    if args.dask:
        from dask.distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
        print(f"Dask dashboard: {client.dashboard_link}")
    df = roam.sweep(
        SCENARIO,
        grid={KEY: losses},
        seeds=args.seeds,
        set={"run.duration": args.duration},
        client=client,
        progress=client is not None,
    )
    if client is not None:
        client.close()
    df["loss"] = df[KEY].astype(float)
    df["goodput_mbps"] = df["goodput_bps"] / 1e6
    table = df.groupby(["loss", "id"])["goodput_mbps"].mean().unstack("id")
    print(table.round(3).to_string())

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    ax = table.plot(marker="o", logx=False)
    ax.set_xlabel("bottleneck loss rate")
    ax.set_ylabel("goodput (Mb/s)")
    ax.set_title(f"{SCENARIO.stem}: mean of {args.seeds} seeds")
    plt.savefig(args.out, dpi=120, bbox_inches="tight")
    print(f"plot: {args.out}")


if __name__ == "__main__":
    main()
