"""A WordNet 3.0 folder nltk 3.10.4 accepts, made from Debian's wordnet-base.

nltk only reads WordNet from its data directories and opens two files wordnet-base lacks:
`lexnames` (only used by Synset.lexname()) and `index.sense` (sense keys); neither affects the
synonyms METEOR uses. `prepare(nltk_data)` copies the database to NLTK_DATA/corpora/wordnet and
writes the standard WordNet 3.0 `lexnames` and an empty `index.sense`.
"""
import shutil
from pathlib import Path

LEXNAMES = """adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute
noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group
noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession
noun.process noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body
verb.change verb.cognition verb.communication verb.competition verb.consumption verb.contact
verb.creation verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative
verb.weather adj.ppl""".split()


def prepare(nltk_data, wordnet_dir="/usr/share/wordnet"):
    target = Path(nltk_data) / "corpora/wordnet"
    if not (target / "data.noun").exists():
        shutil.copytree(wordnet_dir, target, dirs_exist_ok=True)
    lexnames = target / "lexnames"
    if not lexnames.exists():
        cat = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
        lexnames.write_text("".join(f"{i:02d}\t{n}\t{cat[n.split('.')[0]]}\n" for i, n in enumerate(LEXNAMES)))
    (target / "index.sense").touch()
    return target
