#!/usr/bin/env python3
"""Writes metrics/tests/fixtures/wordnet_synonyms_nltk.jsonl: for a seeded sample of words
(WordNet lemmas plus inflected and unknown forms), METEOR's synonym set as nltk 3.10.4 computes
it from Debian's wordnet-base (the names without "_" of every synset of wordnet.synsets(w), plus
w), sorted.

    pip install nltk==3.10.4 && NLTK_DATA=/tmp/nltk_data python3 scripts/make_wordnet_fixture.py /usr/share/wordnet
"""
import json
import random
import sys
from pathlib import Path

import os
os.environ.setdefault("NLTK_DATA", "/tmp/nltk_data")  # a folder holding corpora/wordnet: a copy of the wordnet-base files
sys.path.insert(0, str(Path(__file__).resolve().parent))
from nltk_wordnet import prepare  # noqa: E402

wn_dir = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet"
prepare(os.environ["NLTK_DATA"], wn_dir)
from nltk.corpus import wordnet as wn  # noqa: E402

rng = random.Random(7)
lemmas = sorted({line.split(" ", 1)[0] for pos in ("noun", "verb", "adj", "adv")
                 for line in (Path(wn_dir) / f"index.{pos}").read_text().splitlines() if not line.startswith(" ")})
words = rng.sample(lemmas, 300)
words += [w + s for w in rng.sample(lemmas, 100) for s in ("s", "ed", "ing", "er", "est")]
words += ["went", "geese", "better", "was", "children", "dying", "xyzzyq", "i", "m", "watch", "cuddl"]
out = Path(__file__).resolve().parents[1] / "metrics/tests/fixtures/wordnet_synonyms_nltk.jsonl"
with out.open("w") as f:
    for w in words:
        syns = {l.name() for s in wn.synsets(w) for l in s.lemmas() if "_" not in l.name()} | {w}
        f.write(json.dumps({"word": w, "synonyms": sorted(syns)}) + "\n")
print(f"{len(words)} words -> {out}")
