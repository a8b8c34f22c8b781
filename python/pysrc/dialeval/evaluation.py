"""The main job of ``dialeval evaluate`` from Python: every metric family over your items, and
how each metric agrees with the human ratings.

>>> import dialeval
>>> report = dialeval.evaluate([
...     {"id": "1", "context": ["Do you have pets?"], "response": "Yes, two cats.",
...      "references": ["I have a cat."], "ratings": {"overall": [4, 5]}},
...     ...
... ], out="evaluation")
>>> report.correlations[0]
{'metric': 'BLEU-4', 'criterion': 'Overall', 'level': 'turn', 'kind': 'pearson', ...}
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from . import _dialeval
from ._dialeval import DialevalError, InputError, ResourceError

__all__ = ["Report", "evaluate", "merge"]

FAMILIES = ("length", "specificity", "lexical", "embedding", "context_cosine", "bert_ruber", "slm", "fine_tuned", "smatch", "llm")


@dataclass(frozen=True)
class Report:
    """What ``evaluate`` gives back; the files (report.md, scores.csv, correlations.json, plots)
    are in ``out``.

    - ``scores``: one dict per item: ``id``, ``metrics`` (metric name → score, ``None`` where a
      metric does not apply), ``human`` (criterion → mean rating, ``None`` where unrated);
    - ``correlations``: one dict per row: ``metric``, ``criterion``, ``level`` (``turn`` or
      ``system``), ``kind`` (``pearson``, ``spearman``, ``kendall``), ``statistic``,
      ``pvalue`` (``None`` where undefined) and ``n`` (items, or systems);
    - ``skipped``: family → why it did not run (no encoder, no shipped checkpoint, no LLM);
    - ``notes``: what else the reader should know (AMR blocks skipped).
    """

    scores: list = field(repr=False)
    correlations: list = field(repr=False)
    skipped: dict
    notes: list
    out: Path

    def correlation(self, metric: str, criterion: str, kind: str = "spearman", level: str = "turn") -> Optional[dict]:
        """The row of ``metric`` × ``criterion``, or ``None``."""
        for row in self.correlations:
            if (row["metric"], row["criterion"], row["kind"], row["level"]) == (metric, criterion, kind, level):
                return row
        return None


def evaluate(
    items_or_path: Union[str, bytes, os.PathLike, Iterable[Mapping[str, Any]]],
    *,
    skip: Sequence[str] = (),
    out: Union[str, os.PathLike, None] = None,
    amr: Sequence[Union[str, os.PathLike]] = (),
    encoder: Union[str, os.PathLike, None] = None,
    models: Union[str, os.PathLike, None] = None,
    slm: Union[str, os.PathLike, None] = None,
    ruber: Union[str, os.PathLike, None] = None,
    fine_tuned: Union[str, os.PathLike, None] = None,
    references: str = "max",
    bootstrap: int = 1000,
    chunk: int = 10_000,
    device: str = "cpu",
    llm_base_url: Optional[str] = None,
    llm_model: str = "smollm2-135m",
    shard: Optional[tuple] = None,
    report: bool = True,
    format: str = "jsonl",
) -> Report:
    """Scores every item with every metric family and correlates each metric with the ratings.

    ``items_or_path``: a JSONL file in the format of the datasets crate (a path as ``str``,
    ``bytes`` or ``os.PathLike``; a pipe or FIFO works too), or an iterable of such items as
    dicts (``id``, ``context``, ``response``, optional ``references``, ``knowledge``,
    ``system``, ``annotators``, ``ratings``). ``out``: the report folder (a new temporary one
    when ``None``); its family cache makes a second call on the same items instant.

    Settings, as the flags of ``dialeval evaluate``: ``skip`` (families to leave out: length,
    lexical, embedding, context_cosine, bert_ruber, slm, fine_tuned, smatch, llm), ``amr`` (PENMAN files
    attached to turns by sentence text), ``encoder`` (a sentence-encoder folder; default
    all-mpnet-base-v2 where ``scripts/fetch_mpnet.sh`` puts it, or ``$DIALEVAL_MPNET``;
    all-MiniLM-L6-v2 from ``scripts/fetch_minilm.sh`` is 6× faster), ``models`` (the folder of
    shipped checkpoints, a clone's ``models/``; default ``$DIALEVAL_MODELS``: without it the SLM
    and BERT-RUBER are skipped, never trained), ``slm``/``ruber`` (a checkpoint of your own), ``fine_tuned`` (a
    checkpoint of ``dialeval fine-tune``; none ships yet, so the family is skipped without it),
    ``references`` (``max`` or ``mean``), ``bootstrap`` (resamples of the intervals, 0: none),
    ``chunk``, ``device`` (``cpu``, ``wgpu``, ``wgpu:N``), ``llm_base_url``/``llm_model`` (an
    OpenAI-compatible judge), ``shard`` (``(k, n)``: score only the items of shard k of n,
    chosen by a hash of their id, and leave ``shard.json`` in ``out`` for ``merge``; the report
    is the shard's own), ``report`` (with ``shard``, ``False`` writes only ``shard.json`` and
    the caches: no analysis, no report files; the ``Report`` returned then has the shard's
    scores, no ratings and no correlations, which ``merge`` computes for the whole corpus).

    ``format``: the file's corpus format, as ``dialeval evaluate --corpus`` names it (``jsonl``,
    ``usr`` for USR's ``pc_usr_data.json``, ``fed``, ``fed-dialogue``, ``grade`` for GRADE's
    ``evaluation/`` folder); item dicts are always JSONL.

    Raises ``InputError`` for a bad item (named by its index, or by its line in a file, and the
    field), setting or family name, ``ResourceError`` for a file or folder that cannot be read or
    written (``out`` an existing file, or in use by another call: one run per folder, as the
    command), ``DialevalError`` otherwise. Items given as dicts are staged in a private
    temporary file, removed afterwards; nothing is written into ``out`` but the report and its
    caches. The GIL is released while it runs, and Ctrl-C stops it within seconds
    (``KeyboardInterrupt``): the chunks it finished stay cached in ``out``, so the next call
    resumes from them.
    """
    unknown = [s for s in skip if s not in FAMILIES]
    if unknown:
        raise InputError(f"unknown families in skip: {unknown}; the families are {', '.join(FAMILIES)}")
    _check_counts(bootstrap=bootstrap, chunk=chunk)
    if not isinstance(format, str):
        raise InputError(f"format = {format!r}: expected a str (jsonl, usr, fed, fed-dialogue, grade)")
    if not isinstance(report, bool):
        raise InputError(f"report = {report!r}: expected True or False")
    if shard is not None and (not isinstance(shard, tuple) or len(shard) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in shard)):
        raise InputError(f"shard = {shard!r}: expected (k, n) with 1 <= k <= n")
    out_dir = _out_folder(out)
    keywords = dict(
        skip=list(skip),
        amr=[str(a) for a in amr],
        encoder=None if encoder is None else str(encoder),
        models=None if models is None else str(models),
        slm=None if slm is None else str(slm),
        ruber=None if ruber is None else str(ruber),
        fine_tuned=None if fine_tuned is None else str(fine_tuned),
        references=references,
        bootstrap=bootstrap,
        chunk=chunk,
        device=device,
        llm_base_url=llm_base_url,
        llm_model=llm_model,
        shard=shard,
        report=report,
        format=format,
    )
    done = _with_items(items_or_path, lambda path: _dialeval.evaluate(str(path), str(out_dir), **keywords), format)
    return Report(scores=done["scores"], correlations=done["correlations"], skipped=done["skipped"], notes=done["notes"], out=out_dir)


def merge(
    items_or_path: Union[str, bytes, os.PathLike, Iterable[Mapping[str, Any]]],
    shards: Sequence[Union[str, os.PathLike]],
    *,
    out: Union[str, os.PathLike, None] = None,
    amr: Sequence[Union[str, os.PathLike]] = (),
    bootstrap: int = 1000,
    chunk: int = 10_000,
    format: str = "jsonl",
) -> Report:
    """The report of the whole corpus from the ``out`` folders of its shards (every shard 1..n
    of one split, each scored by ``evaluate(..., shard=(k, n))`` with the same settings), as
    ``dialeval evaluate merge`` builds it: the files in ``out`` are byte for byte those of one
    ``evaluate`` over all the items, ``report.md`` too but for its seconds.

    ``items_or_path``, ``format`` and ``amr`` must be the shards' (the merge checks each
    shard's items against the corpus's items of that shard); ``bootstrap`` and ``chunk`` as
    for ``evaluate``. Raises as ``evaluate`` does; a shard that is
    missing, of another corpus or of other settings is an ``InputError``.
    """
    _check_counts(bootstrap=bootstrap, chunk=chunk)
    out_dir = _out_folder(out)
    folders = [str(Path(os.fsdecode(s))) for s in shards]
    done = _with_items(items_or_path, lambda path: _dialeval.merge(str(path), str(out_dir), folders, amr=[str(a) for a in amr], bootstrap=bootstrap, chunk=chunk, format=format), format)
    return Report(scores=done["scores"], correlations=done["correlations"], skipped=done["skipped"], notes=done["notes"], out=out_dir)


def _check_counts(**counts: Any) -> None:
    """Their ranges are checked by the library (the command's errors); here only what cannot
    cross into it."""
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{name} = {value!r}: expected an int")
        if abs(value) >= 2**63:
            raise InputError(f"{name} = {value}: too large")


def _out_folder(out: Union[str, os.PathLike, None]) -> Path:
    """``out`` created (a new temporary folder when ``None``); ``ResourceError`` when it cannot be."""
    out_dir = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="dialeval-"))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as e:
        raise ResourceError(f"out={str(out_dir)!r}: not a folder ({e.strerror})") from None
    except OSError as e:
        raise ResourceError(f"out={str(out_dir)!r}: cannot create the folder ({e.strerror})") from None
    return out_dir


def _with_items(items_or_path: Any, call: Any, format: str = "jsonl") -> Any:
    """``call(path)`` with the items' JSONL path: the path given, or item dicts staged in a
    private temporary folder (never in ``out``, which may hold a file of the user's under that
    name) and removed afterwards, errors naming the item rather than the staged file's line."""
    if isinstance(items_or_path, (str, os.PathLike, bytes)):
        return call(Path(os.fsdecode(items_or_path)))
    if isinstance(items_or_path, Mapping):
        raise InputError("items_or_path: expected a path or an iterable of item dicts, found a single dict (wrap it in a list)")
    if format != "jsonl":
        raise InputError(f"format={format!r} reads a file: item dicts are JSONL (give the file's path, or format='jsonl')")
    staged = Path(tempfile.mkdtemp(prefix="dialeval-items-"))
    path = staged / "items.jsonl"
    try:
        write_items(items_or_path, path)
        try:
            return call(path)
        except DialevalError as e:
            # Name the item, not the line of a file the user never wrote (item i is line i + 1).
            message = re.sub(re.escape(str(path)) + r":(\d+)", lambda m: f"item {int(m.group(1)) - 1}", str(e))
            raise type(e)(message) from None
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def write_items(items: Iterable[Mapping[str, Any]], path: Union[str, os.PathLike]) -> None:
    """Writes item dicts to ``path`` as the JSONL the Rust loader reads; ``InputError`` naming
    the item and field for what JSON cannot hold."""
    with open(path, "w", encoding="utf-8") as f:
        for i, item in enumerate(items):
            f.write(_item_line(i, item))
            f.write("\n")


def _item_line(i: int, item: Any) -> str:
    """Item ``i`` as one JSON line; ``InputError`` naming the item and the field for what JSON
    cannot hold (NaN, infinity, a value of another type)."""
    if not isinstance(item, Mapping):
        raise InputError(f"item {i}: expected a dict, found {type(item).__name__}")
    bad = _bad_value(item, "$")
    if bad is not None:
        where, value = bad
        raise InputError(f"item {i} at {where}: {value!r} is not a value JSON can hold (a rating must be a finite number or None)")
    try:
        return json.dumps(item, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise InputError(f"item {i}: {e}") from None


def _bad_value(value: Any, where: str) -> Optional[tuple]:
    """The first place in ``value`` (and the value there) that JSON cannot hold, or ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return where, value
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                return f"{where}[{k!r}]", k
            found = _bad_value(v, f"{where}.{k}")
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            found = _bad_value(v, f"{where}[{k}]")
            if found is not None:
                return found
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        return where, value
    return None
