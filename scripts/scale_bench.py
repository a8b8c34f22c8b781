#!/usr/bin/env python3
"""Scale benchmark of the main job: wall time and peak memory of `evaluate` on synthetic corpora.

    python3 scripts/scale_bench.py PROFILE_DIR [--items 100000,400000] [--bootstrap 1000] [--skip llm,slm,bert_ruber,embedding]

Items are made deterministically from the bundled USR-PersonaChat texts in the generic JSONL
format (a 2-4-turn context, a response, two references, Overall and Coherence ratings, one of
12 systems), written once per size to ~/.cache/dialeval/scale/. Each run's wall time and peak
RSS (GNU time) are printed as a Markdown table; run it on a quiet machine and compare ratios
between builds, not absolute times across machines.
"""
import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser()
p.add_argument("profile", type=Path, help="e.g. target/release or target/debug")
p.add_argument("--items", default="100000")
p.add_argument("--bootstrap", default="1000", help="comma-separated resample counts to compare")
p.add_argument("--skip", default="llm,slm,bert_ruber,embedding")
args = p.parse_args()

usr = json.loads((root / "data/usr-personachat/pc_usr_data.json").read_text())
lines = []
for context in usr:
    lines += [l for l in context["context"].split("\n") if l.strip()]
    lines += [r["response"].strip() for r in context["responses"] if r["response"].strip()]
lines = sorted(set(lines))


def corpus(n):
    path = Path.home() / f".cache/dialeval/scale/items-{n}.jsonl"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    with open(path, "w") as f:
        for i in range(n):
            item = {
                "id": f"s{i}",
                "context": rng.sample(lines, rng.randint(2, 4)),
                "response": rng.choice(lines),
                "references": rng.sample(lines, 2),
                "system": f"system-{i % 12}",
                "ratings": {"overall": [rng.randint(1, 5), rng.randint(1, 5)], "coherence": [rng.randint(1, 3)]},
            }
            f.write(json.dumps(item) + "\n")
    return path


print("| items | bootstrap | wall (s) | peak RSS (MB) |\n|---|---|---|---|")
for n in map(int, args.items.split(",")):
    items = corpus(n)
    for b in args.bootstrap.split(","):
        with tempfile.TemporaryDirectory() as out:
            cmd = ["/usr/bin/time", "-v", str(args.profile / "examples/evaluate"), "--corpus", "jsonl", "--input", str(items),
                   "--skip", args.skip, "--bootstrap", b, "--out", out]
            started = time.time()
            run = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.time() - started
            if run.returncode != 0:
                sys.exit(f"FAILED: {' '.join(cmd)}: {run.stderr[-2000:]}")
            rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1)) / 1024
            print(f"| {n} | {b} | {wall:.1f} | {rss:.0f} |", flush=True)
