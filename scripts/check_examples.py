#!/usr/bin/env python3
"""End-to-end check of the amr-graph examples on every AMR file (run by .ci/run).

    python3 scripts/check_examples.py TARGET_DIR [SHARED_DIR]

- `penman FILE` exits 0 and prints one JSON object per graph or error, with the documented fields;
- `smatch TEST GOLD` prints one object per pair and a final corpus object; on the full Little
  Prince v1.6 vs v3.0 releases its corpus F1 equals smatch 1.0.4's 0.9627710817580442.
"""
import json
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[1]
examples = Path(sys.argv[1]) / "release" / "examples"
shared = Path(sys.argv[2]) if len(sys.argv) > 2 else root.parent / "shared"
GRAPH_FIELDS = {"id", "snt", "top", "triples_sorted", "encoded_graph_only"}


def run(*args):
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, args))} exited {out.returncode}: {out.stderr[-2000:]}")
    return [json.loads(line) for line in out.stdout.splitlines()]


files = sorted((root / "data" / "amr").glob("*.amr.txt"))
if (shared / "data").is_dir():
    files += sorted(p for p in (shared / "data").rglob("*.txt") if "amr" in str(p.relative_to(shared)).lower())
checked = 0
for f in files:
    rows = run(examples / "penman", f)
    for row in rows:
        keys = set(row)
        if keys != GRAPH_FIELDS and keys != {"error", "line"}:
            sys.exit(f"FAILED: {f}: unexpected fields {sorted(keys)}")
    graphs = sum("error" not in r for r in rows)
    print(f"penman  {f.name}: {graphs} graphs, {len(rows) - graphs} reported errors")
    checked += 1

pairs = [(root / "data/amr/little-prince-v1.6-first40.amr.txt", root / "data/amr/little-prince-v3.0-first40.amr.txt")]
lp = shared / "data/amr-little-prince"
if lp.is_dir():
    pairs.append((lp / "amr-bank-struct-v1.6.txt", lp / "amr-bank-struct-v3.0.txt"))
for test, gold in pairs:
    rows = run(examples / "smatch", test, gold)
    corpus = rows[-1]["corpus"]
    per_pair = rows[:-1]
    if any(set(r) != {"index", "match", "test_triples", "gold_triples", "precision", "recall", "f1"} for r in per_pair):
        sys.exit(f"FAILED: smatch {test.name}: malformed pair rows")
    print(f"smatch  {test.name} vs {gold.name}: {len(per_pair)} pairs, corpus F1 {corpus['f1']:.6f}")
    if test.name == "amr-bank-struct-v1.6.txt" and abs(corpus["f1"] - 0.9627710817580442) > 1e-12:
        sys.exit(f"FAILED: corpus F1 {corpus['f1']} differs from smatch 1.0.4's 0.9627710817580442")
print(f"examples: {checked} AMR files and {len(pairs)} Smatch runs checked")
