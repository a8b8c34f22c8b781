#!/usr/bin/env python3
"""Times the Python references on the inputs of `cargo bench -p dialeval-benches --bench amr`.

    python3 -m venv .venv && .venv/bin/pip install penman==1.3.1 smatch==1.0.4
    .venv/bin/python scripts/bench_reference.py [SHARED_DIR]

Prints the median of several runs for each task, in milliseconds:
- penman/decode: penman.load of the Little Prince v3.0 file (text -> graphs);
- penman/encode: penman.encode of every graph;
- smatch/random200_r4: smatch.get_amr_match on the 200 random golden pairs, with smatch's
  default iteration_num = 5 (smart init + 4 random restarts), cache cleared per pair.
"""
import json
import statistics
import sys
import time
from pathlib import Path

import penman
import smatch

shared = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / ".." / "shared")
corpus = shared / "data/amr-little-prince/amr-bank-struct-v3.0.txt"
pairs_file = shared / "golden/little_prince_smatch_random_pairs.jsonl"


def median_ms(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


text = corpus.read_text()
graphs = penman.loads(text)
pairs = [json.loads(line) for line in pairs_file.read_text().splitlines()[:200]]


def run_smatch():
    for p in pairs:
        smatch.match_triple_dict.clear()
        smatch.get_amr_match(p["amr1"], p["amr2"])


results = {
    "penman/decode": median_ms(lambda: penman.loads(text), 7),
    "penman/encode": median_ms(lambda: [penman.encode(g) for g in graphs], 7),
    "smatch/random200_r4": median_ms(run_smatch, 7),
}
for name, ms in results.items():
    print(f"{name}\t{ms:.1f} ms")
