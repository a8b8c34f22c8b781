#!/usr/bin/env python3
"""Writes metrics/tests/fixtures/porter_nltk.tsv: word<TAB>nltk stem for a seeded sample of
WordNet 3.0 lemmas (Debian's wordnet-base) plus inflected forms, using nltk 3.10.4's
PorterStemmer() (NLTK_EXTENSIONS mode).

    pip install nltk==3.10.4 && python3 scripts/make_porter_fixture.py /usr/share/wordnet
"""
import random
import sys
from pathlib import Path

from nltk.stem import PorterStemmer

wn = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
lemmas = set()
for pos in ("noun", "verb", "adj", "adv"):
    for line in (wn / f"index.{pos}").read_text().splitlines():
        if line.startswith(" "):
            continue
        word = line.split(" ", 1)[0]
        if word.isalpha():
            lemmas.add(word)
rng = random.Random(20261129)
words = sorted(rng.sample(sorted(lemmas), 4000))
forms = set()
for w in words:
    forms.update([w, w + "s", w + "es", w + "ed", w + "ing", w + "ly", w + "ness", w + "ational", w + "izer", w + "fulli"])
stemmer = PorterStemmer()
out = Path(__file__).resolve().parents[1] / "metrics/tests/fixtures/porter_nltk.tsv"
with out.open("w") as f:
    for w in sorted(forms):
        f.write(f"{w}\t{stemmer.stem(w)}\n")
print(f"{len(forms)} words -> {out}")
