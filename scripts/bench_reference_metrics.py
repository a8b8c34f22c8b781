#!/usr/bin/env python3
"""Times the Python references on the inputs of `cargo bench -p dialeval-benches --bench metrics`.

    python3 -m venv .venv && .venv/bin/pip install sacrebleu==2.6.0 rouge-score==0.1.2 nltk==3.10.4 scipy
    mkdir -p /tmp/nltk_data/corpora && cp -r /usr/share/wordnet /tmp/nltk_data/corpora/wordnet
    NLTK_DATA=/tmp/nltk_data .venv/bin/python scripts/bench_reference_metrics.py [SHARED_DIR]

(nltk also wants `lexnames` and `index.sense` there: scripts/make_wordnet_fixture.py writes them.)
Prints the fastest of several runs per task in milliseconds (noise only ever adds time); the WordNet load is timed once,
separately, as the first METEOR call pays it.
"""
import json
import sys
import time
from pathlib import Path

import numpy as np
import sacrebleu
from nltk.translate.meteor_score import meteor_score
from rouge_score import rouge_scorer
from scipy import stats

shared = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / ".." / "shared")
rows = [json.loads(l) for l in (shared / "golden/usr_personachat_text_metrics.jsonl").read_text().splitlines()]
pairs = [(r["hypothesis"].strip(), r["reference"].strip()) for r in rows]


plain = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
stem = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
start = time.perf_counter()
from nltk.corpus import wordnet  # noqa: E402
from timing import best_ms  # noqa: E402  (scripts/timing.py)

wordnet.ensure_loaded()
meteor_score([["warm", "up"]], ["warming", "up"])
load_ms = (time.perf_counter() - start) * 1000
results = {
    "text240/sentence_bleu": best_ms(lambda: [sacrebleu.sentence_bleu(h, [r]).score for h, r in pairs], 7),
    "text240/rouge": best_ms(lambda: [plain.score(r, h) for h, r in pairs], 7),
    "text240/rouge_stem": best_ms(lambda: [stem.score(r, h) for h, r in pairs], 7),
    "text240/meteor": best_ms(lambda: [meteor_score([r.lower().split()], h.lower().split()) for h, r in pairs], 7),
    "text240/wordnet_load (once)": load_ms,
}
rng = np.random.default_rng(42)
for n in (240, 100_000):
    x = rng.random(n)
    y = np.round((x * 3 + rng.random(n) * 2) * 1.5) / 1.5
    results[f"correlation/Pearson/{n}"] = best_ms(lambda: stats.pearsonr(x, y), 7)
    results[f"correlation/Spearman/{n}"] = best_ms(lambda: stats.spearmanr(x, y), 7)
    results[f"correlation/Kendall/{n}"] = best_ms(lambda: stats.kendalltau(x, y), 7)
for name, ms in results.items():
    print(f"{name}\t{ms:.3f} ms")
