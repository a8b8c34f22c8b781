#!/usr/bin/env python3
"""Times the Python references on the inputs of `cargo bench -p dialeval-benches --bench amr`.

    python3 -m venv .venv && .venv/bin/pip install penman==1.3.1 smatch==1.0.4
    .venv/bin/python scripts/bench_reference.py [SHARED_DIR]

Prints the fastest of several runs for each task, in milliseconds (on a shared machine noise
only ever adds time):
- penman/decode: penman.load of the Little Prince v3.0 file (text -> graphs);
- penman/encode: penman.encode of every graph;
- smatch/random200_r4: smatch.get_amr_match on the 200 random golden pairs, with smatch's
  default iteration_num = 5 (smart init + 4 random restarts), cache cleared per pair;
- smatch/diplomacy70_r4: the same on the 70 Diplomacy sentences both annotators' files hold
  (graphs by their first ::id, read as benches/amr.rs reads them).
"""
import json
import re
import sys
from pathlib import Path

import penman
import smatch
from timing import best_ms  # noqa: E402  (scripts/timing.py)

shared = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / ".." / "shared")
corpus = shared / "data/amr-little-prince/amr-bank-struct-v3.0.txt"
pairs_file = shared / "golden/little_prince_smatch_random_pairs.jsonl"


text = corpus.read_text()
graphs = penman.loads(text)
pairs = [json.loads(line) for line in pairs_file.read_text().splitlines()[:200]]


def blocks_by_id(path):
    """Graphs by their first ::id, one line each: blocks are runs of non-blank lines, comment
    lines dropped, (a / amr-empty) placeholders left out, the first block of an id kept."""
    out = {}
    for block in re.split(r"\n[ \t\r]*\n", path.read_text()):
        lines = block.splitlines()
        ids = [m.group(1) for line in lines if line.lstrip().startswith("#") for m in [re.search(r"::id (\S+)", line)] if m]
        graph = " ".join(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))
        if ids and graph.startswith("(") and "amr-empty" not in graph:
            out.setdefault(ids[0], graph)
    return out


diplomacy_dir = shared / "data/amr-diplomacy"
annotator_a = blocks_by_id(diplomacy_dir / "dip-all-amr-jweinman-20220926.txt")
annotator_b = blocks_by_id(diplomacy_dir / "dip-all-amr-smosher.txt")
diplomacy = [{"amr1": annotator_a[i], "amr2": annotator_b[i]} for i in sorted(set(annotator_a) & set(annotator_b))]
assert len(diplomacy) == 70, len(diplomacy)


def run_smatch(pairs):
    for p in pairs:
        smatch.match_triple_dict.clear()
        smatch.get_amr_match(p["amr1"], p["amr2"])


results = {
    "penman/decode": best_ms(lambda: penman.loads(text), 7),
    "penman/encode": best_ms(lambda: [penman.encode(g) for g in graphs], 7),
    "smatch/random200_r4": best_ms(lambda: run_smatch(pairs), 7),
    "smatch/diplomacy70_r4": best_ms(lambda: run_smatch(diplomacy), 5),
}
for name, ms in results.items():
    print(f"{name}\t{ms:.1f} ms")
