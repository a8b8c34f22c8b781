from typing import Any, Iterator, Optional, Sequence, Tuple, Union

__version__: str

class DialevalError(Exception): ...
class InputError(DialevalError): ...
class AmrError(DialevalError): ...
class ResourceError(DialevalError): ...

class Score:
    """Precision, recall and F-measure (rouge-score's ``Score``)."""
    @property
    def precision(self) -> float: ...
    @property
    def recall(self) -> float: ...
    @property
    def fmeasure(self) -> float: ...
    def __iter__(self) -> Iterator[float]: ...

class SignificanceResult:
    """A correlation as scipy.stats returns it; unpacks as ``(statistic, pvalue)``."""
    @property
    def statistic(self) -> float: ...
    @property
    def pvalue(self) -> float: ...
    @property
    def n(self) -> int: ...
    def __iter__(self) -> Iterator[float]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> float: ...

class Graph:
    """An AMR graph: ``top``, ``triples`` (source, role with its colon, target), ``metadata``."""
    def __init__(self, triples: Sequence[Tuple[str, str, Optional[str]]], top: Optional[str] = None, metadata: Optional[Sequence[Tuple[str, str]]] = None) -> None: ...
    @property
    def top(self) -> str: ...
    @property
    def triples(self) -> list[Tuple[str, str, Optional[str]]]: ...
    @property
    def metadata(self) -> dict[str, str]: ...

Numbers = Sequence[float]

def sentence_bleu(hypothesis: str, references: Union[str, Sequence[str]]) -> float:
    """``sacrebleu.sentence_bleu(hypothesis, references).score``."""
def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """``sacrebleu.corpus_bleu(hypotheses, references).score``; ``references`` is a list of streams."""
def rouge_l(hypothesis: str, references: Union[str, Sequence[str]], *, stemming: bool = False) -> Score:
    """rouge-score's ROUGE-L against the best reference."""
def meteor(hypothesis: str, references: Union[str, Sequence[str]]) -> float:
    """nltk's ``meteor_score`` over lower-cased whitespace tokens."""
def nidf(text: str) -> Optional[float]:
    """NIDF specificity (See et al. 2019) over the bundled DailyDialog table, in [0, 1]; ``None`` without a word."""
def pearson(x: Numbers, y: Numbers, *, nan_policy: str = "propagate") -> SignificanceResult:
    """``scipy.stats.pearsonr``."""
def spearman(x: Numbers, y: Numbers, *, nan_policy: str = "propagate") -> SignificanceResult:
    """``scipy.stats.spearmanr``."""
def kendall(x: Numbers, y: Numbers, *, nan_policy: str = "propagate", method: str = "auto") -> SignificanceResult:
    """``scipy.stats.kendalltau`` (tau-b)."""
def decode(text: str) -> Graph:
    """``penman.decode``: exactly one graph."""
def decode_all(text: str) -> list[Graph]:
    """``penman.iterdecode``: every graph, in order."""
def encode(graph: Graph, *, metadata: bool = True) -> str:
    """``penman.encode``, metadata comment lines first unless ``metadata=False``."""
def smatch(test: str, gold: str) -> Tuple[float, float, float]:
    """Smatch precision, recall and F1 of two one-graph PENMAN strings."""
def evaluate(
    path: str,
    out: str,
    *,
    skip: Sequence[str] = (),
    amr: Sequence[str] = (),
    encoder: Optional[str] = None,
    models: Optional[str] = None,
    slm: Optional[str] = None,
    ruber: Optional[str] = None,
    fine_tuned: Optional[str] = None,
    references: str = "max",
    bootstrap: int = 1000,
    chunk: int = 10000,
    device: str = "cpu",
    llm_base_url: Optional[str] = None,
    llm_model: str = "smollm2-135m",
    shard: Optional[tuple[int, int]] = None,
    report: bool = True,
    format: str = "jsonl",
) -> dict[str, Any]:
    """The main job over the JSONL corpus at ``path`` into ``out`` (only shard ``(k, n)`` of it
    when given, leaving ``shard.json`` for ``merge``; with ``report=False`` nothing else): ``scores``, ``correlations``, ``skipped``
    and ``notes`` (``dialeval.evaluate`` wraps it)."""

def merge(path: str, out: str, shards: Sequence[str], *, amr: Sequence[str] = (), bootstrap: int = 1000, chunk: int = 10000, format: str = "jsonl") -> dict[str, Any]:
    """The report of the whole JSONL corpus at ``path`` into ``out`` from its shards' folders
    (``dialeval.merge`` wraps it)."""
