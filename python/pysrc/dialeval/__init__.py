"""dialeval: automatic evaluation of open-domain dialogue responses, on the dialeval Rust crates.

- ``dialeval.metrics``: ``sentence_bleu``, ``corpus_bleu`` (sacrebleu), ``rouge_l`` (rouge-score),
  ``meteor`` (nltk, WordNet 3.0);
- ``dialeval.stats``: ``pearson``, ``spearman``, ``kendall`` (scipy.stats, with p-values);
- ``dialeval.amr``: ``smatch`` (smatch 1.0.4), ``decode``, ``decode_all``, ``encode`` and
  ``Graph`` (penman 1.3.1);
- ``dialeval.evaluate``: the main job of ``dialeval evaluate`` (every metric family over your
  items, correlated with their ratings), returning a ``Report``; ``shard=(k, n)`` scores one
  shard of the items and ``dialeval.merge`` builds the whole report from the shards;
- ``dialeval.ray.evaluate`` (``pip install "dialeval[ray]"``): the same job over a Ray cluster.

Each matches its reference library on the golden vectors of the Rust crates, with the same
tolerances. Errors are ``dialeval.DialevalError`` subclasses carrying the Rust message:
``InputError`` (bad input), ``AmrError`` (PENMAN that does not parse), ``ResourceError`` (a
missing resource such as WordNet).
"""

from . import amr, metrics, stats
from ._dialeval import AmrError, DialevalError, InputError, ResourceError, __version__
from .evaluation import Report, evaluate, merge

__all__ = ["AmrError", "DialevalError", "InputError", "Report", "ResourceError", "__version__", "amr", "evaluate", "merge", "metrics", "stats"]
