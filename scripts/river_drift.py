#!/usr/bin/env python3
"""River baselines for `okstream reproduce drift` (issue 40).

Reads the streams that `okstream reproduce drift --write-streams DIR` wrote
(DIR/streams.json and one CSV per stream and run, rows in stream order) and
runs River's models on them prequentially -- every event is predicted, then
learnt -- with River's defaults and nothing set per stream:

  classification: HoeffdingAdaptiveTreeClassifier (HAT), ARFClassifier (ARF),
                  StandardScaler | LogisticRegression, NoChangeClassifier
                  (the last label seen), PriorClassifier (class prior);
  regression:     HoeffdingAdaptiveTreeRegressor (HATR), ARFRegressor (ARF),
                  StandardScaler | LinearRegression, StatisticRegressor(Mean)
                  (the running mean).

Only the models' seeds are set (seed = run number), so that a re-run gives
the same numbers. Metrics are the Go experiment's: the overall prequential
error (mistake % or MSE; mean and sample std over runs), the error over the
windows ending at the manifest's `ts` (mean over runs), and, per change
point, the window before, the first window after, the worst window until
the next change and the recovery time (`recovery` below, the definition of
eval/paper/drift.go's driftRecovery on top of dataset/drift.Recovery).
A prediction of None (a model that has seen nothing) counts as a mistake
(classification) or as 0 (regression).

Usage (from the repository root; River pinned in scripts/river_requirements.txt):

  go run ./cmd/okstream reproduce drift --write-streams /tmp/drift-streams [--data elec.csv]
  python3 scripts/river_drift.py /tmp/drift-streams --out docs/data/drift_river.json [--jobs 2]
  go run ./cmd/okstream reproduce drift --rerender   # or re-run: the section shows the River columns

The output records River's and Python's versions and the date; the numbers
are recorded, not run in CI.
"""

import argparse
import csv
import datetime
import json
import math
import multiprocessing
import os
import platform
import sys
import time


def models_for(task, seed):
    from river import dummy, forest, linear_model, preprocessing, stats, tree

    if task == "classification":
        return {
            "HAT": lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=seed),
            "ARF": lambda: forest.ARFClassifier(seed=seed),
            "LogisticRegression": lambda: preprocessing.StandardScaler() | linear_model.LogisticRegression(),
            "NoChange": lambda: dummy.NoChangeClassifier(),
            "Prior": lambda: dummy.PriorClassifier(),
        }
    return {
        "HATR": lambda: tree.HoeffdingAdaptiveTreeRegressor(seed=seed),
        "ARF": lambda: forest.ARFRegressor(seed=seed),
        "LinearRegression": lambda: preprocessing.StandardScaler() | linear_model.LinearRegression(),
        "Mean": lambda: dummy.StatisticRegressor(stats.Mean()),
    }


def read_stream(path):
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        names = header[:-1]
        rows = []
        for row in r:
            rows.append(({k: float(v) for k, v in zip(names, row[:-1])}, float(row[-1])))
    return rows


def score(job):
    """Runs one model on one run of one stream; returns per-window errors."""
    directory, item, run, label, max_events = job
    task = item["task"]
    rows = read_stream(os.path.join(directory, item["files"][run]))
    if max_events:
        rows = rows[:max_events]
    model = models_for(task, run)[label]()
    ts = item["ts"]
    sums = [0.0] * len(ts)
    counts = [0] * len(ts)
    k = 0
    total = 0.0
    start = time.process_time()
    for t, (x, y) in enumerate(rows, start=1):
        while k < len(ts) - 1 and t > ts[k]:
            k += 1
        if task == "classification":
            yc = y > 0  # River's binary classifiers take bool labels
            p = model.predict_one(x)
            loss = 0.0 if p == yc else 100.0
            model.learn_one(x, yc)
        else:
            p = model.predict_one(x)
            if p is None:
                p = 0.0
            loss = (p - y) ** 2
            model.learn_one(x, y)
        sums[k] += loss
        counts[k] += 1
        total += loss
    secs = time.process_time() - start
    windows = [s / c if c else float("nan") for s, c in zip(sums, counts)]
    return (item["key"], run, label, total / len(rows), windows, secs, len(rows))


def recovery(ts, errs, change, tol):
    """dataset/drift.Recovery: (before, peak, time) for a change."""
    before, after, peak = math.nan, -math.inf, -1
    for k, t in enumerate(ts):
        if t <= change:
            before = errs[k]
        elif errs[k] > after:
            after, peak = errs[k], k
    if peak < 0 or math.isnan(before):
        return before, after, -1
    for k in range(peak, len(ts)):
        if errs[k] <= before + tol:
            return before, after, ts[k] - change
    return before, after, -1


def changes_of(ts, errs, changes, task, tol_points, tol_rel):
    """eval/paper/drift.go's driftRecovery."""
    out = []
    for i, c in enumerate(changes):
        end = len(ts)
        if i + 1 < len(changes):
            while end > 0 and ts[end - 1] > changes[i + 1]:
                end -= 1
        before, _, _ = recovery(ts[:end], errs[:end], c, 0)
        tol = tol_points if task == "classification" else tol_rel * before
        before, peak, rec = recovery(ts[:end], errs[:end], c, tol)
        first = next((errs[k] for k, t in enumerate(ts[:end]) if t > c), math.nan)
        if not math.isnan(before) and peak <= before + tol:
            rec = 0
        out.append({"at": c, "before": before, "first": first, "peak": peak, "recovery": rec})
    return out


def finite(v):
    """JSON has no NaN or infinity: they become null."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite(x) for x in v]
    return v


def mean_std(v):
    m = sum(v) / len(v)
    if len(v) == 1:
        return m, 0.0
    return m, math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="directory written by okstream reproduce drift --write-streams")
    ap.add_argument("--out", default="docs/data/drift_river.json")
    ap.add_argument("--jobs", type=int, default=1, help="processes in parallel")
    ap.add_argument("--streams", default="", help="comma-separated stream keys (default: all)")
    ap.add_argument("--models", default="", help="comma-separated model labels (default: all)")
    ap.add_argument("--runs", type=int, default=0, help="use only the first RUNS runs of each stream (0: all)")
    ap.add_argument("--max-events", type=int, default=0, help="time-box: score only the first N events (0: all); such results are recorded but not shown beside okstream's")
    ap.add_argument("--note", default="", help="a sentence recorded with the results (e.g. what was reduced)")
    a = ap.parse_args()

    import river

    with open(os.path.join(a.dir, "streams.json")) as f:
        man = json.load(f)
    keep_s = set(a.streams.split(",")) if a.streams else None
    keep_m = set(a.models.split(",")) if a.models else None
    jobs, items = [], []
    for item in man["streams"]:
        if keep_s and item["key"] not in keep_s:
            continue
        items.append(item)
        runs = len(item["files"]) if a.runs <= 0 else min(a.runs, len(item["files"]))
        for label in models_for(item["task"], 0):
            if keep_m and label not in keep_m:
                continue
            for run in range(runs):
                jobs.append((a.dir, item, run, label, a.max_events))
    t0 = time.time()
    if a.jobs > 1:
        with multiprocessing.Pool(a.jobs) as pool:
            results = pool.map(score, jobs, chunksize=1)
    else:
        results = []
        for j in jobs:
            results.append(score(j))
            print(f"{j[1]['key']} run {j[2]} {j[3]}: {results[-1][3]:.4f} ({results[-1][5]:.1f} s)", file=sys.stderr)
    by = {}
    for key, run, label, overall, windows, secs, events in results:
        by.setdefault((key, label), []).append((run, overall, windows, secs, events))
    out_streams = []
    for item in items:
        ms = []
        for label in models_for(item["task"], 0):
            rs = sorted(by.get((item["key"], label), []))
            if not rs:
                continue
            overall, std = mean_std([r[1] for r in rs])
            nw = len(item["ts"])
            windowed = [sum(r[2][k] for r in rs) / len(rs) for k in range(nw)]
            m = {"label": label, "overall": overall, "std": std, "windowed": windowed,
                 "seconds": sum(r[3] for r in rs) / len(rs), "events": rs[0][4], "runs": len(rs)}
            if rs[0][4] == item["n"]:
                m["changes"] = changes_of(item["ts"], windowed, item.get("changes") or [], item["task"],
                                          man["tol_points"], man["tol_rel"])
            ms.append(m)
        out_streams.append({"key": item["key"], "spec": item["spec"], "n": item["n"], "runs": max((m["runs"] for m in ms), default=0),
                            "ts": item["ts"], "models": ms})
    res = {
        "river_version": river.__version__,
        "python_version": platform.python_version(),
        "date": datetime.date.today().isoformat(),
        "script": "scripts/river_drift.py",
        "note": a.note,
        "wall_seconds": round(time.time() - t0, 1),
        "streams": out_streams,
    }
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(finite(res), f, indent=1, allow_nan=False)
        f.write("\n")
    print(f"wrote {a.out} ({res['wall_seconds']} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
