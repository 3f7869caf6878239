#!/usr/bin/python3
"""Page-disjoint held-out set of web-pgdocs: no test page appears in train.

The shared web-pgdocs split starts each test episode on a page no train
episode starts on, but its episodes then wander onto the same hub pages
(the index, the SQL command list, ...): 434 of its 600 test steps show a page
some train step shows too, so a model trained on train has seen most of
test. This script cuts a test set that shares no page with train.

Pages come from the data's access trace, `train_steps.jsonl` and
`test_steps.jsonl` (one line per step, in the order of the npz rows: its
`page` field is the URL path without fragment or query, i.e. the document the
screenshot shows). Rule:

  * train is the shared train split unchanged (its steps define the set
    P of train pages);
  * test is every maximal run of consecutive steps of one shared test
    episode whose pages are all outside P; each run becomes one episode
    (its first action set to -1, as at any episode start), runs shorter
    than --min-run steps are dropped.

So no test screenshot shows a page any train screenshot shows. Near-copies
inside a test episode (scrolling back, going back) remain, as in any agent's
memory; what goes is the model's memory of the pages.

Writes into --out: train.npz, test.npz (float obs), train_codes.npz,
test_codes.npz (the shared faiss codes, same rows) and split.json (the
counts and the rule). Run with Debian's python3 (numpy):

    /usr/bin/python3 scripts/page_disjoint_split.py \\
        --data /work/shared/data/web-pgdocs --out /tmp/pgdocs-disjoint
"""
import argparse
import json
import os

import numpy as np


def load_steps(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def check_rows(steps, npz, name):
    t = npz["actions"].shape[0]
    if len(steps) != t:
        raise SystemExit(f"{name}: {len(steps)} steps in the trace, {t} rows in the npz")
    starts = set(int(s) for s in npz["episode_start"])
    for i, s in enumerate(steps):
        if (s["step"] == 0) != (i in starts):
            raise SystemExit(f"{name}: row {i} (episode {s['episode']} step {s['step']}) disagrees with episode_start")


def runs_outside(steps, pages, min_run):
    """Row ranges [a, b) of consecutive steps of one episode on pages outside pages."""
    out, a = [], None
    for i, s in enumerate(steps):
        ok = s["page"] not in pages
        new_ep = i > 0 and steps[i - 1]["episode"] != s["episode"]
        if a is not None and (not ok or new_ep):
            out.append((a, i))
            a = None
        if ok and a is None:
            a = i
    if a is not None:
        out.append((a, len(steps)))
    return [(a, b) for a, b in out if b - a >= min_run]


def cut(npz, key, runs):
    rows = np.concatenate([np.arange(a, b) for a, b in runs])
    arr = npz[key][rows]
    actions = npz["actions"][rows].copy()
    starts, n = [], 0
    for a, b in runs:
        starts.append(n)
        actions[n] = -1
        n += b - a
    return {key: arr, "actions": actions, "episode_start": np.array(starts, dtype=np.int64)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="the web-pgdocs folder")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--min-run", type=int, default=2, help="drop test runs shorter than this many steps")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    train_steps = load_steps(os.path.join(args.data, "train_steps.jsonl"))
    test_steps = load_steps(os.path.join(args.data, "test_steps.jsonl"))
    train_pages = {s["page"] for s in train_steps}
    runs = runs_outside(test_steps, train_pages, args.min_run)
    if not runs:
        raise SystemExit("no test step lies outside the train pages")

    summary = {"rule": "train unchanged; test = runs of >= min_run consecutive steps of one test episode on pages no train step shows",
               "min_run": args.min_run, "train_pages": len(train_pages)}
    for kind, key in (("", "obs"), ("_codes", "codes")):
        tr = np.load(os.path.join(args.data, f"train{kind}.npz"))
        te = np.load(os.path.join(args.data, f"test{kind}.npz"))
        check_rows(train_steps, tr, f"train{kind}")
        check_rows(test_steps, te, f"test{kind}")
        np.savez(os.path.join(args.out, f"train{kind}.npz"),
                 **{key: tr[key], "actions": tr["actions"], "episode_start": tr["episode_start"]})
        np.savez(os.path.join(args.out, f"test{kind}.npz"), **cut(te, key, runs))

    test_pages = {test_steps[i]["page"] for a, b in runs for i in range(a, b)}
    assert not (test_pages & train_pages)
    summary.update({
        "train_states": len(train_steps),
        "test_states": sum(b - a for a, b in runs),
        "test_episodes": len(runs),
        "test_pages": len(test_pages),
        "shared_test_states_on_train_pages": sum(s["page"] in train_pages for s in test_steps),
        "runs": [[test_steps[a]["episode"], test_steps[a]["step"], b - a] for a, b in runs],
    })
    with open(os.path.join(args.out, "split.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}))


if __name__ == "__main__":
    main()
