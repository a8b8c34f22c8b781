#!/usr/bin/env python3
"""Scale benchmark of the main job: wall time and peak memory of `evaluate` on synthetic corpora.

    python3 scripts/scale_bench.py PROFILE_DIR [--items 100000,300000,1000000] [--bootstrap 0]
        [--skip llm,slm,bert_ruber,embedding] [--amr-share 0.1] [--chunk 10000] [--resume]

Items are made deterministically from the bundled USR-PersonaChat texts in the generic JSONL
format (a 2-4-turn context, a response, two references, Overall and Coherence ratings, one of
12 systems), written once per size to ~/.cache/dialeval/scale/. A share of the items
(`--amr-share`, 10% by default) takes its response and references from the sentences of the
bundled silver AMR, so that they have graphs and Smatch scores them; the others from the same
sentences with a word added, which have none. Each run's wall time and peak RSS (GNU time) are printed as a Markdown table; run it
on a quiet machine and compare ratios between builds, not absolute times across machines.

`--resume` also kills a run halfway through the lexical family (once half of its chunks are in
the cache), starts it again, and prints how many chunks the second run took from the cache and
how long it took: the finished chunks are not computed again.
"""
import argparse
import json
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser()
p.add_argument("profile", type=Path, help="e.g. target/release or target/debug")
p.add_argument("--items", default="100000")
p.add_argument("--bootstrap", default="0", help="comma-separated resample counts to compare")
p.add_argument("--skip", default="llm,slm,bert_ruber,embedding")
p.add_argument("--amr-share", type=float, default=0.1)
p.add_argument("--chunk", type=int, default=10000)
p.add_argument("--resume", action="store_true", help="also kill and resume a run of the first size")
args = p.parse_args()

amr_file = root / "data/silver-amr/usr-personachat.silver.amr.txt"
with_graph = sorted({l[len("# ::snt "):].strip() for l in amr_file.read_text().splitlines() if l.startswith("# ::snt ")})
usr = json.loads((root / "data/usr-personachat/pc_usr_data.json").read_text())
lines = []
for context in usr:
    lines += [l for l in context["context"].split("\n") if l.strip()]
    lines += [r["response"].strip() for r in context["responses"] if r["response"].strip()]
covered = set(with_graph)
lines = sorted(set(lines))
# Every bundled utterance has a silver graph: a word added makes a sentence without one.
without_graph = [f"{l} indeed" for l in lines]


def corpus(n):
    path = Path.home() / f".cache/dialeval/scale/items-{n}-amr{args.amr_share:g}.jsonl"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for i in range(n):
            pool = with_graph if rng.random() < args.amr_share else without_graph
            item = {
                "id": f"s{i}",
                "context": rng.sample(lines, rng.randint(2, 4)),
                "response": rng.choice(pool),
                "references": rng.sample(pool, 2),
                "system": f"system-{i % 12}",
                "ratings": {"overall": [rng.randint(1, 5), rng.randint(1, 5)], "coherence": [rng.randint(1, 3)]},
            }
            f.write(json.dumps(item) + "\n")
    tmp.rename(path)
    return path


def command(items, out, bootstrap, timed=True):
    # Killed without GNU time in between: a SIGKILL to `time` would leave evaluate running.
    return (["/usr/bin/time", "-v"] if timed else []) + [str(args.profile / "examples/evaluate"), "--corpus", "jsonl", "--input", str(items), "--amr", str(amr_file),
            "--skip", args.skip, "--bootstrap", str(bootstrap), "--chunk", str(args.chunk), "--out", out]


def peak_mb(stderr):
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1)) / 1024


print(f"chunks of {args.chunk}; AMR for {args.amr_share:.0%} of the responses and references; --skip {args.skip}\n")
print("| items | bootstrap | wall (s) | peak RSS (MB) |\n|---|---|---|---|")
for n in map(int, args.items.split(",")):
    items = corpus(n)
    for b in args.bootstrap.split(","):
        with tempfile.TemporaryDirectory() as out:
            started = time.time()
            run = subprocess.run(command(items, out, b), capture_output=True, text=True)
            wall = time.time() - started
            if run.returncode != 0:
                sys.exit(f"FAILED: {' '.join(command(items, out, b))}: {run.stderr[-2000:]}")
            print(f"| {n} | {b} | {wall:.1f} | {peak_mb(run.stderr):.0f} |", flush=True)

if args.resume:
    n = int(args.items.split(",")[0])
    items = corpus(n)
    chunks = -(-n // args.chunk)
    with tempfile.TemporaryDirectory() as out:
        cmd = command(items, out, 0, timed=False)
        started = time.time()
        first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lexical = Path(out) / "metrics/lexical"
        while first.poll() is None and len(list(lexical.glob("*.json"))) < chunks // 2:
            time.sleep(0.2)
        first.send_signal(signal.SIGKILL)
        first.wait()
        killed_after = time.time() - started
        done = len(list(lexical.glob("*.json")))
        started = time.time()
        second = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.time() - started
        if second.returncode != 0:
            sys.exit(f"FAILED: the resumed run: {second.stderr[-2000:]}")
        report = (Path(out) / "report.md").read_text()
        row = next(l for l in report.splitlines() if l.startswith("| lexical |"))
        print(f"\nkilled after {killed_after:.1f} s with {done} of {chunks} lexical chunks cached; the resumed run took {wall:.1f} s; report.md: {row}")
        if f"({done} of {chunks} chunks from the cache)" not in row and done < chunks:
            sys.exit("FAILED: the resumed run did not take the finished chunks from the cache")
