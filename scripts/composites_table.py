#!/usr/bin/env python3
"""Markdown table of the per-quality composites (docs/composites.md) beside Combined and the
parts, on the criteria of each composite's quality family, from main-job report folders.

    python3 scripts/composites_table.py LABEL=DIR [LABEL=DIR ...]

Each DIR is an `--out` folder of `dialeval evaluate` (its correlations.json). A cell is the
Spearman with the criterion, its p-value and n; the last column of each metric is its Spearman
with response length. Criteria a corpus does not rate are left out.
"""
import json
import sys
from pathlib import Path

FAMILIES = {
    "coherence": ["Coherence", "Correct", "Semantically appropriate"],
    "engagement": ["Engagingness", "Groundedness", "Interesting", "Specific"],
    "overall": ["Overall"],
}
METRICS = ["SLM", "BERT-RUBER-unref", "Greedy-Matching", "NIDF", "Combined", "Combined-Coherence", "Combined-Engagement"]


def cell(rows, metric, criterion):
    for r in rows:
        if r["metric"] == metric and r["criterion"] == criterion and r["kind"] == "spearman":
            if r["statistic"] is None:
                return f"– (n={r['n']})"
            return f"{r['statistic']:.3f} (p={r['pvalue']:.1e}, n={r['n']})"
    return None


def main(args):
    for arg in args:
        label, _, folder = arg.partition("=")
        report = json.loads((Path(folder) / "correlations.json").read_text())
        rows = report["turn_level"]["rows"]
        lengths = {m["metric"]: m["length"] for m in report["metrics"] if m.get("length")}
        criteria = sorted({r["criterion"] for r in rows})
        for family, wanted in FAMILIES.items():
            have = [c for c in wanted if c in criteria]
            if not have:
                continue
            print(f"\n**{label}, {family}** (Spearman, p, n; ρ len: Spearman with response length)\n")
            print("| metric | " + " | ".join(have) + " | ρ len (p) |")
            print("|---" * (len(have) + 2) + "|")
            for metric in METRICS:
                cells = [cell(rows, metric, c) for c in have]
                if all(c is None for c in cells):
                    continue
                length = lengths.get(metric)
                rho = f"{length['spearman']:.3f} (p={length['pvalue']:.2g})" if length and length.get("spearman") is not None else "–"
                print(f"| {metric} | " + " | ".join(c or "–" for c in cells) + f" | {rho} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
