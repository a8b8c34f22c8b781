"""Synthetic corpora for the scale benchmarks (scripts/scale_bench.py, scripts/ray_bench.py): items
made deterministically from the bundled USR-PersonaChat texts in the generic JSONL format (a
2-4-turn context, a response, two references, Overall and Coherence ratings, one of 12
systems), written once per size to ~/.cache/dialeval/scale/. A share of the items takes its
response and references from the sentences of the bundled silver AMR, so that they have graphs
and Smatch scores them; the others from the same sentences with a word added, which have none.
"""
import json
import random
from pathlib import Path

root = Path(__file__).resolve().parents[1]
AMR_FILE = root / "data/silver-amr/usr-personachat.silver.amr.txt"
with_graph = sorted({l[len("# ::snt "):].strip() for l in AMR_FILE.read_text().splitlines() if l.startswith("# ::snt ")})
usr = json.loads((root / "data/usr-personachat/pc_usr_data.json").read_text())
lines = []
for context in usr:
    lines += [l for l in context["context"].split("\n") if l.strip()]
    lines += [r["response"].strip() for r in context["responses"] if r["response"].strip()]
lines = sorted(set(lines))
# Every bundled utterance has a silver graph: a word added makes a sentence without one.
without_graph = [f"{l} indeed" for l in lines]


def synthetic_corpus(n, amr_share=0.1):
    """The JSONL file of ``n`` synthetic items (made once, then reused)."""
    path = Path.home() / f".cache/dialeval/scale/items-{n}-amr{amr_share:g}.jsonl"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for i in range(n):
            pool = with_graph if rng.random() < amr_share else without_graph
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
