#!/usr/bin/env python3
"""Correlations of trained SLM / BERT-RUBER runs with human ratings, per run and as mean ± sd over
seeds, on USR-PersonaChat (bundled) and FED (../shared), each beside its Spearman with response
length; plus the runs' test AUCs, epoch times. Drives the `evaluate` example (the library does
the statistics) and only tabulates what it writes.

    scripts/slm_runs_report.py TARGET_DIR RUN_DIR... [--ruber RUN_DIR...] [--fine-tuned RUN_DIR...] [--encoder DIR] > report.md

--encoder DIR scores with another encoder's vectors (all-mpnet-base-v2's folder for runs trained
on MPNet); every run given must then be trained on it.

A run directory named `<name>-s<seed>` is grouped with the other seeds of `<name>`; the mean ± sd
table is printed only where some variant has more than one seed. An epoch kept by
`train_slm --keep-epochs yes` (`<run>/epochs/<N>`) is a run of its own, named `<run>/epoch-N` and
grouped by variant and epoch; it has no test split of its own (the run tests only its best).
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

root = Path(__file__).resolve().parent.parent
parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("target", type=Path)
parser.add_argument("runs", nargs="*")
parser.add_argument("--ruber", nargs="*", default=[])
parser.add_argument("--fine-tuned", nargs="*", default=[])
parser.add_argument("--encoder")
options = parser.parse_args()
target, encoder = options.target, options.encoder
slm_runs, ruber_runs, fine_tuned_runs = options.runs, options.ruber, options.fine_tuned
FAMILIES = {"slm": ("--slm", "SLM"), "ruber": ("--ruber", "BERT-RUBER-unref"), "fine_tuned": ("--fine-tuned", "Fine-tuned")}
evaluate = target / "release/examples/evaluate"
fed = root.parent / "shared/data/fed/fed_data.json"


def label(run):
    """A run's name: its directory's, or `<run>/epoch-N` for a kept epoch."""
    path = Path(run).resolve()
    if path.parent.name == "epochs":
        return f"{path.parent.parent.name}/epoch-{path.name}"
    return path.name


def variant(run):
    """The seeds of a variant share it: the name without its `-s<seed>`."""
    return re.sub(r"-s\d+(?=/|$)", "", label(run))


def correlations(run, family, corpus):
    out = root / "runs" / "report" / f"{label(run).replace('/', '-')}-{corpus}"
    flag, metric = FAMILIES[family]
    others = {"slm": "slm", "ruber": "bert_ruber", "fine_tuned": "fine_tuned"}
    skip = ",".join(["lexical", "embedding", "smatch", "llm"] + [name for f, name in others.items() if f != family])
    cmd = [str(evaluate), flag, run, "--skip", skip, "--out", str(out)]
    if corpus == "fed":
        cmd += ["--corpus", "fed", "--input", str(fed)]
    if encoder is not None:
        cmd += ["--encoder", encoder]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"evaluate failed for {run}: {done.stderr[-2000:]}")
    report = json.loads((out / "correlations.json").read_text())
    rows = {r["criterion"]: r for r in report["turn_level"]["rows"] if r["metric"] == metric and r["kind"] == "spearman"}
    # A constant score (graph-only without any graph) has no correlation: NaN, shown as "–".
    nan = {"statistic": float("nan"), "pvalue": float("nan"), "n": 0}
    rows = {c: (r if r["statistic"] is not None else nan) for c, r in rows.items()}
    length = next((m["length"] for m in report["metrics"] if m["metric"] == metric and m["length"]), {"spearman": float("nan"), "pvalue": float("nan")})
    return rows, length


def fmt_p(p):
    if p != p:
        return "–"
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


for corpus in ("usr", "fed"):
    print(f"\n## {corpus.upper()} turn level: Spearman (p) per run, n items\n")
    per_group = defaultdict(lambda: defaultdict(list))
    criteria = None
    lines = []
    for family, runs in [("slm", slm_runs), ("ruber", ruber_runs), ("fine_tuned", fine_tuned_runs)]:
        for run in runs:
            rows, length = correlations(run, family, corpus)
            criteria = criteria or list(rows)
            cells = " | ".join(f"{rows[c]['statistic']:.3f} ({fmt_p(rows[c]['pvalue'])})" if rows[c]["statistic"] == rows[c]["statistic"] else "–" for c in criteria)
            n = next(iter(rows.values()))["n"]
            rho = f"{length['spearman']:.3f} ({fmt_p(length['pvalue'])})" if length["spearman"] == length["spearman"] else "– (constant score)"
            lines.append(f"| {label(run)} | {n} | {cells} | {rho} |")
            name = variant(run)
            for c in criteria:
                per_group[name][c].append(rows[c]["statistic"])
            per_group[name]["length"].append(length["spearman"])
    print(f"| run | n | {' | '.join(criteria)} | ρ with length |")
    print("|---|---|" + "---|" * (len(criteria) + 1))
    print("\n".join(lines))
    if all(len(values["length"]) < 2 for values in per_group.values()):
        continue
    print(f"\n### {corpus.upper()}: mean ± sd over seeds\n")
    print(f"| variant | seeds | {' | '.join(criteria)} | ρ with length |")
    print("|---|---|" + "---|" * (len(criteria) + 1))
    for name, values in per_group.items():
        def ms(v):
            v = [x for x in v if x == x]  # runs without a correlation (NaN) are left out
            if not v:
                return "–"
            return f"{statistics.mean(v):.3f} ± {statistics.stdev(v):.3f}" if len(v) > 1 else f"{v[0]:.3f}"
        print(f"| {name} | {len(values['length'])} | {' | '.join(ms(values[c]) for c in criteria)} | {ms(values['length'])} |")

print("\n## DailyDialog++ test100 ROC AUC (positive vs random / vs adversarial), with graphs and with every graph withheld; dev AUC; s per epoch\n")
print("A kept epoch has no test of its own: its row gives its dev AUC and its epoch's time.\n")
print("| run | random | adversarial | random, no graphs | adversarial, no graphs | dev AUC | s/epoch |")
print("|---|---|---|---|---|---|---|")
get = lambda d, k: f"{d[k]:.3f}" if d.get(k) is not None else "–"
for run in slm_runs:
    path = Path(run)
    if (path / "epoch.json").is_file():
        epoch = json.loads((path / "epoch.json").read_text())
        print(f"| {label(run)} | – | – | – | – | {epoch['dev_auc']:.3f} | {epoch['seconds']:.0f} |")
        continue
    test = json.loads((path / "test.json").read_text())
    log = [json.loads(l) for l in (path / "log.jsonl").read_text().splitlines()]
    withheld = test.get("graphs_withheld", {})
    secs = statistics.mean(l["seconds"] for l in log)
    best_dev = max(l["dev_auc"] for l in log)
    print(f"| {label(run)} | {get(test, 'auc_random')} | {get(test, 'auc_adversarial')} | {get(withheld, 'auc_random')} | {get(withheld, 'auc_adversarial')} | {best_dev:.3f} | {secs:.0f} |")
