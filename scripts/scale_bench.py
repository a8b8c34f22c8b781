#!/usr/bin/env python3
"""Scale benchmark of the main job: wall time and peak memory of `evaluate` on synthetic corpora.

    python3 scripts/scale_bench.py PROFILE_DIR [--items 100000,300000,1000000] [--bootstrap 0]
        [--skip llm,slm,bert_ruber,embedding] [--amr-share 0.1] [--chunk 10000] [--resume]

Items are made by scripts/synthetic_corpus.py (deterministic, from the bundled USR-PersonaChat
texts; a share `--amr-share`, 10% by default, with graphs). Each run's wall time and peak RSS (GNU time) are printed as a Markdown table; run it
on a quiet machine and compare ratios between builds, not absolute times across machines.

`--resume` also kills a run halfway through the lexical family (once half of its chunks are in
the cache), starts it again, and prints how many chunks the second run took from the cache and
how long it took: the finished chunks are not computed again.
"""
import argparse
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic_corpus import AMR_FILE, synthetic_corpus  # scripts/synthetic_corpus.py

p = argparse.ArgumentParser()
p.add_argument("profile", type=Path, help="e.g. target/release or target/debug")
p.add_argument("--items", default="100000")
p.add_argument("--bootstrap", default="0", help="comma-separated resample counts to compare")
p.add_argument("--skip", default="llm,slm,bert_ruber,embedding")
p.add_argument("--amr-share", type=float, default=0.1)
p.add_argument("--chunk", type=int, default=10000)
p.add_argument("--resume", action="store_true", help="also kill and resume a run of the first size")
args = p.parse_args()

amr_file = AMR_FILE


def corpus(n):
    return synthetic_corpus(n, args.amr_share)


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
