#!/usr/bin/env python3
"""The same calls through the `dialeval` Python package and through the libraries it replaces,
in one Python process, on the golden inputs (USR-PersonaChat's 240 pairs, the Little Prince).

    python3 -m venv /tmp/bench && /tmp/bench/bin/pip install ./python sacrebleu==2.6.0 \\
        rouge-score==0.1.2 nltk==3.10.4 scipy penman==1.3.1 smatch==1.0.4 numpy
    /tmp/bench/bin/python scripts/bench_python.py [SHARED_DIR]

(nltk reads WordNet 3.0 from NLTK_DATA, default /tmp/nltk_data, made from Debian's wordnet-base
by scripts/nltk_wordnet.py.) Prints, per task, the fastest of several runs of each side in milliseconds (noise only
ever adds time) and the ratio reference / dialeval, as a Markdown table. Both sides have loaded
their resources (WordNet) before the timing. Nothing else may share the cores while it runs.
"""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("NLTK_DATA", "/tmp/nltk_data")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from nltk_wordnet import prepare  # noqa: E402

prepare(os.environ["NLTK_DATA"])

import numpy as np
import penman
import sacrebleu
import smatch
from nltk.translate.meteor_score import meteor_score
from rouge_score import rouge_scorer
from scipy import stats as scipy_stats

import logging

import dialeval
from dialeval import amr, metrics, stats
from timing import best_ms  # noqa: E402  (scripts/timing.py)

shared = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / ".." / "shared")
rows = [json.loads(line) for line in (shared / "golden/usr_personachat_text_metrics.jsonl").read_text().splitlines()]
pairs = [(r["hypothesis"].strip(), r["reference"].strip()) for r in rows]
hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
corr = json.loads((shared / "golden/usr_personachat_correlations.json").read_text())
x, y = np.array(corr["metric_vectors"]["sentence_bleu"]), np.array(corr["human_mean_vectors"]["Overall"])
amr_text = (shared / "data/amr-little-prince/amr-bank-struct-v3.0.txt").read_text()
smatch_rows = [json.loads(line) for line in (shared / "golden/little_prince_smatch_random_pairs.jsonl").read_text().splitlines()][:50]


logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # its tokenisation hints, once per call
rouge_l = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
# Resources loaded before timing: WordNet on both sides.
meteor_score([refs[0].lower().split()], hyps[0].lower().split())
metrics.meteor(hyps[0], [refs[0]])


def smatch_reference():
    for row in smatch_rows:
        smatch.match_triple_dict.clear()
        best, test, gold = smatch.get_amr_match(row["amr1"], row["amr2"])
        smatch.compute_f(best, test, gold)


tasks = [
    ("sentence BLEU, 240 pairs", lambda: [sacrebleu.sentence_bleu(h, [r]).score for h, r in pairs], lambda: [metrics.sentence_bleu(h, [r]) for h, r in pairs]),
    ("corpus BLEU, 240 pairs", lambda: sacrebleu.corpus_bleu(hyps, [refs]).score, lambda: metrics.corpus_bleu(hyps, [refs])),
    ("ROUGE-L, 240 pairs", lambda: [rouge_l.score(r, h)["rougeL"] for h, r in pairs], lambda: [metrics.rouge_l(h, [r]) for h, r in pairs]),
    ("METEOR, 240 pairs", lambda: [meteor_score([r.lower().split()], h.lower().split()) for h, r in pairs], lambda: [metrics.meteor(h, [r]) for h, r in pairs]),
    ("Pearson + Spearman + Kendall, n = 240", lambda: (scipy_stats.pearsonr(x, y), scipy_stats.spearmanr(x, y), scipy_stats.kendalltau(x, y)), lambda: (stats.pearson(x, y), stats.spearman(x, y), stats.kendall(x, y))),
    ("PENMAN decode + encode, 1,562 graphs", lambda: [penman.encode(g) for g in penman.iterdecode(amr_text)], lambda: [amr.encode(g) for g in amr.decode_all(amr_text)]),
    ("Smatch, 50 pairs", smatch_reference, lambda: [amr.smatch(r["amr1"], r["amr2"]) for r in smatch_rows]),
]

print(f"dialeval {dialeval.__version__}; sacrebleu {sacrebleu.__version__}; penman {penman.__version__}")
print("| task | reference (ms) | dialeval (ms) | reference / dialeval |")
print("|---|---|---|---|")
for name, reference, ours in tasks:
    runs = 3 if "Smatch" in name or "PENMAN" in name or "METEOR" in name else 7
    ref_ms, our_ms = best_ms(reference, runs), best_ms(ours, runs)
    print(f"| {name} | {ref_ms:.2f} | {our_ms:.2f} | {ref_ms / our_ms:.1f}× |")
