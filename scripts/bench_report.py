#!/usr/bin/env python3
"""Regenerates the ratio table of benches/README.md on this machine: times the Python references
(scripts/bench_reference.py, scripts/bench_reference_metrics.py) and the criterion benches on the
same inputs and writes Python time / Rust time per task, with the project's speed goals.

    python3 scripts/bench_report.py [--shared ../shared] [--no-cargo] [--target DIR]

Installs the pinned references once into ~/.cache/dialeval/bench-venv (PyPI), prepares nltk's
WordNet from Debian's wordnet-base (scripts/nltk_wordnet.py), runs
`cargo bench -p dialeval-benches --bench amr --bench metrics --bench families` (skipped with
--no-cargo: the last criterion results in the target directory are read), and replaces the block
between the `bench_report` markers in benches/README.md. Both sides report their fastest run
(criterion: the fastest sample per iteration; the references run before and after the benches):
on a shared machine noise only adds time. The machine's CPU and core count are written with the
table.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache/dialeval"
PINS = ["penman==1.3.1", "smatch==1.0.4", "sacrebleu==2.6.0", "rouge-score==0.1.2", "nltk==3.10.4", "scipy==1.17.0", "numpy"]
BEGIN, END = "<!-- bench_report:begin -->", "<!-- bench_report:end -->"

# (Python key, criterion id, task, input, goal ratio or None)
ROWS = [
    ("penman/decode", "penman/decode", "PENMAN decode (text → graphs)", "Little Prince v3.0, 1,562 graphs, all cores", 100),
    ("penman/encode", "penman/encode", "PENMAN encode", "same", None),
    ("smatch/random200_r4", "smatch/random200_r4", "Smatch, smatch's budget (smart init + 4 restarts)", "200 random pairs, parse + match, all cores", None),
    ("smatch/random200_r4", "smatch/random200_r20", "Smatch, default search (proof attempt, 20 restarts + local search) vs smatch -r 5", "same, all cores", 100),
    ("smatch/diplomacy70_r4", "smatch/diplomacy70_r4", "Smatch, smatch's budget", "70 Diplomacy annotator pairs, parse + match, all cores", None),
    ("smatch/diplomacy70_r4", "smatch/diplomacy70_r20", "Smatch, default search vs smatch -r 5", "same", 100),
    ("text240/sentence_bleu", "text240/sentence_bleu", "sentence BLEU", "240 USR-PersonaChat pairs", 30),
    ("text240/rouge", "text240/rouge", "ROUGE-1/2/L", "same", None),
    ("text240/rouge_stem", "text240/rouge_stem", "ROUGE-1/2/L, stemmed", "same", None),
    ("text240/meteor", "text240/meteor", "METEOR (fresh synonym cache)", "same", None),
    ("text240/wordnet_load (once)", "text240/wordnet_load", "WordNet 3.0 load", "Debian wordnet-base", None),
] + [
    (f"correlation/{k}/{n}", f"correlation/{k}/{n}", f"{k}", f"n = {n:,}", 5 if n == 100_000 else None)
    for n in (240, 100_000) for k in ("Pearson", "Spearman", "Kendall")
]
RUST_ONLY = [
    ("datasets/usr_load", "load USR-PersonaChat", "300 items"),
    ("datasets/ddpp_dev_load", "load DailyDialog++ dev", "1,000 contexts"),
    ("datasets/amr_attach", "read silver AMR + attach", "771 graphs, 300 items"),
    ("families/length", "family: length", "USR-PersonaChat, 300 items"),
    ("families/lexical", "family: BLEU, ROUGE-L, METEOR", "same"),
    ("families/smatch", "family: Smatch", "same, silver AMR"),
    ("families/embedding", "family: BERTScore, embedding metrics (vectors warmed)", "same"),
    ("families/bert_ruber", "family: BERT-RUBER (states warmed)", "same"),
    ("families/slm", "family: SLM (states warmed)", "same"),
    ("llm/render_full", "LLM prompts, full variant", "300 items × 4 criteria"),
    ("simplify+paths", "simplify + linearise + path matrix", "1,562 graphs"),
]


def venv_python():
    venv = CACHE / "bench-venv"
    marker = venv / "pins.txt"
    if not marker.exists() or marker.read_text() != "\n".join(PINS):
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin/pip"), "install", "-q", *PINS], check=True)
        marker.write_text("\n".join(PINS))
    return venv / "bin/python"


def references(python, shared):
    sys.path.insert(0, str(ROOT / "scripts"))
    from nltk_wordnet import prepare

    nltk_data = CACHE / "nltk_data"
    prepare(nltk_data)
    env = dict(os.environ, NLTK_DATA=str(nltk_data))
    out = {}
    for script in ("bench_reference.py", "bench_reference_metrics.py"):
        print(f"bench_report: {script} …", file=sys.stderr)
        done = subprocess.run([str(python), str(ROOT / "scripts" / script), str(shared)], env=env, capture_output=True, text=True, check=True)
        for line in done.stdout.splitlines():
            name, ms = line.split("\t")
            out[name] = float(ms.split()[0])
    return out


def criterion(target):
    """The fastest sample of each benchmark, per iteration, in ms."""
    out = {}
    for bench in (target / "criterion").rglob("new/benchmark.json"):
        full_id = json.loads(bench.read_text())["full_id"]
        sample = json.loads((bench.parent / "sample.json").read_text())
        out[full_id] = min(t / n for t, n in zip(sample["times"], sample["iters"])) / 1e6
    return out


def fmt_ms(ms):
    return f"{ms * 1000:.1f} µs" if ms < 1 else f"{ms:.2f} ms" if ms < 100 else f"{ms:,.0f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--no-cargo", action="store_true")
    ap.add_argument("--target", default=os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target")))
    args = ap.parse_args()
    target = Path(args.target)
    python = venv_python()
    python_ms = references(python, Path(args.shared))
    if not args.no_cargo:
        env = dict(os.environ, CARGO_TARGET_DIR=str(target))
        subprocess.run(["cargo", "bench", "-p", "dialeval-benches", "--bench", "amr", "--bench", "metrics", "--bench", "families"], cwd=ROOT, env=env, check=True)
        # The references again after the benches, the faster of both kept: a noisy spell of the
        # machine then weighs on neither side alone.
        again = references(python, Path(args.shared))
        python_ms = {k: min(v, again.get(k, v)) for k, v in python_ms.items()}
    rust_ms = criterion(target)
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), "unknown CPU")
    lines = [
        f"Generated by `scripts/bench_report.py` on {datetime.date.today()}: {cpu}, {os.cpu_count()} cores; fastest runs on both sides; Python references from PyPI ({', '.join(PINS[:6])}).",
        "",
        "| task | input | Python reference | Rust | ratio | goal |",
        "|---|---|---|---|---|---|",
    ]
    for py_key, rust_id, task, data, goal in ROWS:
        py, rs = python_ms.get(py_key), rust_ms.get(rust_id)
        if py is None or rs is None:
            lines.append(f"| {task} | {data} | {fmt_ms(py) if py else '–'} | {fmt_ms(rs) if rs else '–'} | – | not measured |")
            continue
        ratio = py / rs
        verdict = "–" if goal is None else (f"{goal}x: met" if ratio >= goal else f"{goal}x: missed by {goal / ratio:.1f}x")
        lines.append(f"| {task} | {data} | {fmt_ms(py)} | {fmt_ms(rs)} | {ratio:,.1f}x | {verdict} |")
    lines += ["", "| task (no Python reference) | input | Rust |", "|---|---|---|"]
    for rust_id, task, data in RUST_ONLY:
        rs = rust_ms.get(rust_id)
        lines.append(f"| {task} | {data} | {fmt_ms(rs) if rs else 'not measured'} |")
    readme = ROOT / "benches/README.md"
    text = readme.read_text()
    block = "\n".join([BEGIN, *lines, END])
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    readme.write_text(text)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
