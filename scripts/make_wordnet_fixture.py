#!/usr/bin/env python3
"""Writes metrics/tests/fixtures/wordnet_synonyms_nltk.jsonl: for a seeded sample of words
(WordNet lemmas plus inflected and unknown forms), METEOR's synonym set as nltk 3.10.4 computes
it from Debian's wordnet-base (the names without "_" of every synset of wordnet.synsets(w), plus
w), sorted.

    mkdir -p /tmp/nltk_data/corpora && cp -r /usr/share/wordnet /tmp/nltk_data/corpora/wordnet  # nltk refuses paths outside its data dirs
    pip install nltk==3.10.4 && NLTK_DATA=/tmp/nltk_data python3 scripts/make_wordnet_fixture.py /usr/share/wordnet
"""
import json
import random
import sys
from pathlib import Path

import os
os.environ.setdefault("NLTK_DATA", "/tmp/nltk_data")  # a folder holding corpora/wordnet: a copy of the wordnet-base files
from nltk.corpus import wordnet as wn  # noqa: E402

wn_dir = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet"
# Debian's wordnet-base has no `lexnames` file, which nltk's reader opens at start-up; it only
# feeds Synset.lexname(), not synonyms, so write the standard WordNet 3.0 list if it is missing.
LEXNAMES = """adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute
noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group
noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession
noun.process noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body
verb.change verb.cognition verb.communication verb.competition verb.consumption verb.contact
verb.creation verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative
verb.weather adj.ppl""".split()
lexnames = Path(os.environ["NLTK_DATA"]) / "corpora/wordnet/lexnames"
if not lexnames.exists():
    cat = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
    lexnames.write_text("".join(f"{i:02d}\t{n}\t{cat[n.split('.')[0]]}\n" for i, n in enumerate(LEXNAMES)))
# Nor has it `index.sense` (sense keys), which nltk also opens; synonyms never use it.
(lexnames.parent / "index.sense").touch()

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
