#!/usr/bin/env python3
"""What the AMR graphs add to an SLM on USR-PersonaChat, per band of response-graph size: the
SLM's Spearman with each rating when the silver graphs are attached and when none is, on all
items and on the items whose response graph has few, middling or many concept nodes. Runs
through the Python package (dialeval.evaluate), so the wheel must be installed.

    scripts/graph_bands.py CHECKPOINT [CHECKPOINT...] > table.md

Reads data/usr-personachat (the bundled ratings) and data/silver-amr/usr-personachat.silver.amr.txt;
the encoder is the one the checkpoint was trained on (all-MiniLM-L6-v2 by default, or --encoder DIR).
"""
import argparse
import json
import tempfile
from pathlib import Path

import dialeval
from dialeval import amr, stats

root = Path(__file__).resolve().parent.parent
parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("checkpoints", nargs="+")
parser.add_argument("--encoder")
options = parser.parse_args()
checkpoints, encoder = options.checkpoints, options.encoder

CRITERIA = {"Natural": "naturalness", "Maintains Context": "coherence", "Engaging": "engagingness", "Uses Knowledge": "groundedness", "Overall": "overall", "Understandable": "understandable"}

# USR-PersonaChat as JSONL items, as the crate's loader reads it (turns split on newlines,
# the persona as knowledge).
items = []
for c, entry in enumerate(json.loads((root / "data/usr-personachat/pc_usr_data.json").read_text())):
    context = [t.strip() for t in entry["context"].split("\n") if t.strip()]
    for r in entry["responses"]:
        items.append({
            "id": f"{c}/{r['model']}",
            "context": context,
            "response": r["response"].strip(),
            "knowledge": entry["fact"].rstrip(),
            "system": r["model"],
            "ratings": {name: r[key] for key, name in CRITERIA.items()},
        })

silver = root / "data/silver-amr/usr-personachat.silver.amr.txt"
nodes = {}
for g in amr.decode_all(silver.read_text()):
    text = g.metadata.get("snt")
    if text is not None:
        nodes[text.strip()] = sum(1 for _, role, _ in g.triples if role == ":instance")
size = [nodes.get(it["response"]) for it in items]
known = sorted(s for s in size if s is not None)
# Bands at the terciles of the response-graph sizes.
cuts = (known[len(known) // 3], known[2 * len(known) // 3])
bands = {
    "all": [True] * len(items),
    f"≤{cuts[0]} nodes": [s is not None and s <= cuts[0] for s in size],
    f"{cuts[0] + 1}–{cuts[1]} nodes": [s is not None and cuts[0] < s <= cuts[1] for s in size],
    f">{cuts[1]} nodes": [s is not None and s > cuts[1] for s in size],
}


def scores(checkpoint, graphs):
    out = Path(tempfile.mkdtemp(prefix="dialeval-bands-"))
    report = dialeval.evaluate(items, out=out, skip=("length", "lexical", "embedding", "context_cosine", "bert_ruber", "smatch", "llm"), slm=checkpoint, encoder=encoder, amr=[silver] if graphs else [], bootstrap=0)
    return [s["metrics"].get("SLM") for s in report.scores], [s["human"] for s in report.scores]


def fmt(r):
    return "–" if r.statistic != r.statistic else f"{r.statistic:.3f} (p={r.pvalue:.1e})"


print(f"Response-graph sizes (concept nodes) of the {len(known)} of {len(items)} USR-PersonaChat responses with a silver graph: terciles at {cuts}.\n")
for checkpoint in checkpoints:
    with_graphs, human = scores(checkpoint, True)
    without, _ = scores(checkpoint, False)
    print(f"\n### {checkpoint}\n")
    print("| band | n | criterion | with graphs | without | difference |")
    print("|---|---|---|---|---|---|")
    for band, keep in bands.items():
        idx = [i for i, k in enumerate(keep) if k and with_graphs[i] is not None and without[i] is not None]
        for criterion in ("Overall", "Coherence", "Groundedness"):
            h = [human[i].get(criterion) for i in idx]
            pairs = [(i, x) for i, x in zip(idx, h) if x is not None]
            a = stats.spearman([with_graphs[i] for i, _ in pairs], [x for _, x in pairs])
            b = stats.spearman([without[i] for i, _ in pairs], [x for _, x in pairs])
            print(f"| {band} | {len(pairs)} | {criterion} | {fmt(a)} | {fmt(b)} | {a.statistic - b.statistic:+.3f} |")
