#!/usr/bin/env python3
"""Overhead of the Ray path: `dialeval.ray.evaluate` in shards on a local Ray cluster against one
`dialeval.evaluate` in one process, on the same cores, on a synthetic corpus
(scripts/synthetic_corpus.py), with the merged report checked equal to the one-process one.

    python3 scripts/ray_bench.py [--items 100000] [--shards 4] [--skip llm,embedding,context_cosine,bert_ruber,slm,fine_tuned]
        [--encoder DIR] [--models DIR] [--cpus 2]

Needs the wheel and Ray in the running Python (`pip install "./python[ray]"`). The cluster is
started before the clock starts (its start-up is printed apart) and stopped at the end; an
untimed run first fills the encoders' token-state cache, so both timed runs read it. Prints a
Markdown row: items, shards, one-process seconds, Ray seconds, overhead, and the projected wall
time of a million items on 10 and 100 nodes like this one: the Ray seconds per item scaled
linearly (an upper bound's opposite: the merge and analysis on the driver do not shrink with
more nodes, and are a few seconds per 100,000 items).
"""
import argparse
import tempfile
import time
from pathlib import Path

import ray

import dialeval
import dialeval.ray
from synthetic_corpus import AMR_FILE, synthetic_corpus  # scripts/synthetic_corpus.py

p = argparse.ArgumentParser()
p.add_argument("--items", type=int, default=100_000)
p.add_argument("--shards", type=int, default=4)
p.add_argument("--skip", default="llm,embedding,context_cosine,bert_ruber,slm,fine_tuned")
p.add_argument("--encoder")
p.add_argument("--models")
p.add_argument("--cpus", type=int, default=2)
args = p.parse_args()

items = synthetic_corpus(args.items)
settings = dict(skip=tuple(s for s in args.skip.split(",") if s), amr=[str(AMR_FILE)], bootstrap=0)
for key in ("encoder", "models"):
    if getattr(args, key):
        settings[key] = getattr(args, key)
started = time.time()
ray.init(num_cpus=args.cpus, logging_level="warning", log_to_driver=False)
cluster_start = time.time() - started
try:
    with tempfile.TemporaryDirectory() as tmp:
        # Untimed: fills the encoders' token-state cache (shared by every run on the machine),
        # so that neither timed run pays for encoding and the other not.
        dialeval.evaluate(items, out=Path(tmp) / "warm-up", **settings)
        started = time.time()
        dialeval.evaluate(items, out=Path(tmp) / "one", **settings)
        one = time.time() - started
        # Twice, into fresh folders (nothing kept): the first call starts the cluster's worker
        # processes (Python, the wheel's import), the second finds them running, as every call
        # but the first on a long-lived cluster does.
        on_ray = []
        for run in ("ray-cold", "ray-warm"):
            started = time.time()
            dialeval.ray.evaluate(items, shards=args.shards, out=Path(tmp) / run, work_dir=str(Path(tmp) / f"work-{run}"), num_cpus=max(1, args.cpus // args.shards) if args.shards <= args.cpus else 1, progress=False, **settings)
            on_ray.append(time.time() - started)
            for f in ("scores.jsonl", "correlations.json"):
                if (Path(tmp) / "one" / f).read_bytes() != (Path(tmp) / run / f).read_bytes():
                    raise SystemExit(f"FAILED: {f} differs between the one-process and the Ray run ({run})")
finally:
    ray.shutdown()
cold, warm = on_ray
per_item = warm / args.items
print(f"Ray cluster start-up: {cluster_start:.1f} s (not counted)\n")
print("| items | shards | one process (s) | Ray, first call (s) | Ray, workers running (s) | overhead (first / running) | 1M items, 10 nodes (s) | 1M items, 100 nodes (s) |\n|---|---|---|---|---|---|---|---|")
print(f"| {args.items} | {args.shards} | {one:.1f} | {cold:.1f} | {warm:.1f} | {100 * (cold / one - 1):+.0f}% / {100 * (warm / one - 1):+.0f}% | {per_item * 1e6 / 10:.0f} | {per_item * 1e6 / 100:.0f} |")
