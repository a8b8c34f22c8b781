"""The main job on a Ray cluster (``pip install "dialeval[ray]"``): the corpus cut into shards,
each scored by a Ray task, and the shards merged into the report a one-machine
``dialeval.evaluate`` writes, byte for byte but the seconds.

>>> import dialeval.ray
>>> report = dialeval.ray.evaluate("items.jsonl", shards=16, out="evaluation",
...                                address="auto", models="path/to/clone/models")

Why Ray tasks over shards rather than Ray Data: the job is already cut into shards that score
independently and merge exactly (``dialeval evaluate --shard k/n`` + ``merge``), and what makes a
metric corpus-relative (BERT-RUBER's hybrids, the combinations) is decided over the whole corpus
in the merge. A task per shard keeps that exactness, loads each encoder and checkpoint once per
shard (every learned family of a shard shares one loaded encoder), and lets Ray do what a
scheduler must: place tasks by resources, retry a task whose worker or node died, and report
progress. Ray Data's ``map_batches`` would re-batch items and need the merge anyway.

Where things live when the nodes share no disk:

- the items travel through Ray's object store (one copy per node that runs a shard);
- each task scores in a node-local work folder (``work_dir``, default the node's temporary
  folder), keyed by the corpus, the shard and the settings: a task retried on the same node
  resumes from the chunks its family caches finished;
- only each shard's ``shard.json`` comes back to the driver, which keeps it in
  ``out/shards/`` as soon as it arrives (a shard that finished is never recomputed) and merges:
  ``shard.json`` says where its items are in the corpus file and carries their rows and
  ratings, so the merge reads the corpus's bytes (checked against the shards') but never parses
  its items;
- the encoder, the shipped checkpoints (``models=``) and the AMR files (``amr=``) are read by
  the tasks from the paths given: they must exist at those paths on every node (a shared disk,
  or the same clone and ``scripts/fetch_mpnet.sh`` run on each node).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from ._dialeval import InputError, __version__
from .evaluation import FAMILIES, Report, merge, write_items

__all__ = ["evaluate"]

# The keywords of dialeval.evaluate a shard is scored with (``out`` and ``shard`` are the
# shard's own).
_SETTINGS = ("skip", "amr", "encoder", "models", "slm", "ruber", "fine_tuned", "references", "bootstrap", "chunk", "device", "llm_base_url", "llm_model", "format")


def evaluate(
    items_or_path: Union[str, bytes, os.PathLike, Iterable[Mapping[str, Any]]],
    *,
    shards: int,
    out: Union[str, os.PathLike],
    address: Optional[str] = None,
    num_cpus: float = 1,
    num_gpus: float = 0,
    max_retries: int = 3,
    work_dir: Optional[str] = None,
    progress: bool = True,
    **settings: Any,
) -> Report:
    """Runs ``dialeval.evaluate`` over ``shards`` Ray tasks and merges them into ``out``.

    ``items_or_path``: a JSONL path or item dicts, as for ``dialeval.evaluate``, or a USR or
    FED file with ``format=`` (``"usr"``, ``"fed"``, ``"fed-dialogue"``). ``address``:
    the cluster to join (``"auto"``, ``"host:port"``; ``None`` starts or joins a local one, as
    ``ray.init`` does). ``num_cpus`` / ``num_gpus``: what each shard task asks of its node
    (with ``device="wgpu"`` in ``settings``, give ``num_gpus=1``); the task's Rust thread pool
    uses ``num_cpus`` threads. ``max_retries``: how often a task whose worker process or node
    died is run again (a shard that fails for a reason in the data is not retried: a bad item
    is an empty cell with a note, as on one machine, and a broken file an error). ``work_dir``:
    the node-local folder of the tasks' work. ``settings``: the other keywords of
    ``dialeval.evaluate`` (``skip``, ``amr``, ``encoder``, ``models``, …), the same for every
    shard. Returns the merged ``Report``; ``out`` holds its files and ``out/shards/``.
    """
    import ray

    unknown = sorted(set(settings) - set(_SETTINGS))
    if unknown:
        raise InputError(f"unknown settings {unknown}; dialeval.ray.evaluate takes {', '.join(_SETTINGS)}")
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise InputError(f"shards = {shards!r}: expected an int of at least 1")
    bad = [s for s in settings.get("skip", ()) if s not in FAMILIES]
    if bad:
        raise InputError(f"unknown families in skip: {bad}; the families are {', '.join(FAMILIES)}")
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = {k: ([str(x) for x in v] if k in ("skip", "amr") else (str(v) if isinstance(v, os.PathLike) else v)) for k, v in settings.items()}
    corpus_format = settings.get("format", "jsonl")
    if corpus_format == "grade":
        raise InputError("format='grade' is a folder: dialeval.ray takes one corpus file (JSONL, USR, FED)")
    with tempfile.TemporaryDirectory(prefix="dialeval-ray-") as staging:
        if isinstance(items_or_path, (str, os.PathLike, bytes)):
            path = Path(os.fsdecode(items_or_path))
        elif corpus_format != "jsonl":
            raise InputError(f"format={corpus_format!r} reads a file: item dicts are JSONL (give the file's path, or format='jsonl')")
        else:
            path = Path(staging) / "items.jsonl"
            write_items(items_or_path, path)
        blob = path.read_bytes()
        key = hashlib.sha256(blob + json.dumps([__version__, settings], sort_keys=True).encode()).hexdigest()[:16]
        if not ray.is_initialized():
            ray.init(address=address, logging_level="warning", log_to_driver=False)
        data = ray.put(blob)
        task = ray.remote(_score_shard).options(
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            max_retries=max_retries,
            retry_exceptions=False,
            runtime_env={"env_vars": {"RAYON_NUM_THREADS": str(max(1, int(num_cpus)))}},
        )
        shard_dirs = [out_dir / "shards" / f"{k}-of-{shards}" for k in range(1, shards + 1)]
        pending = {}
        for k, folder in enumerate(shard_dirs, start=1):
            # A shard kept by an earlier call on the same corpus and settings is not run again.
            if _kept(folder, key):
                continue
            pending[task.remote(data, k, shards, settings, work_dir, key)] = (k, folder)
        done = shards - len(pending)
        _say(progress, f"dialeval.ray: {shards} shards, {done} kept from an earlier call, {len(pending)} to score")
        bar = _Bar(progress, shards, done)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            k, folder = pending.pop(ready[0])
            try:
                shard_json = ray.get(ready[0])
            except ray.exceptions.RayTaskError as e:
                cause = e.cause if isinstance(getattr(e, "cause", None), Exception) else e
                raise cause from None
            _keep(folder, key, shard_json)
            bar.shard_done(k)
        bar.close()
        amr = settings.get("amr", ())
        return merge(path, shard_dirs, out=out_dir, amr=amr, bootstrap=settings.get("bootstrap", 1000), chunk=settings.get("chunk", 10_000), format=corpus_format)


def _score_shard(blob: bytes, k: int, n: int, settings: dict, work_dir: Optional[str], key: str) -> bytes:
    """One shard scored in a node-local folder (resumed there from its chunk caches when the
    task is retried on the same node); its ``shard.json``."""
    from .evaluation import evaluate as evaluate_locally

    folder = Path(work_dir or tempfile.gettempdir()) / "dialeval-ray" / key / f"{k}-of-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    # The corpus as the driver read it (JSONL, or a USR or FED file: the loaders go by the
    # format setting, not the name).
    items = folder / "corpus"
    if not items.is_file():
        partial = folder / f"corpus.{os.getpid()}"
        partial.write_bytes(blob)
        partial.replace(items)
    # Only shard.json: the merge analyses the whole corpus once.
    evaluate_locally(items, out=folder / "out", shard=(k, n), report=False, **settings)
    return (folder / "out" / "shard.json").read_bytes()


def _kept(folder: Path, key: str) -> bool:
    return (folder / "shard.json").is_file() and (folder / "key").is_file() and (folder / "key").read_text() == key


def _keep(folder: Path, key: str, shard_json: bytes) -> None:
    """The shard's scores written where the merge reads them, the key last (a folder without
    it is not a finished shard)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "key").unlink(missing_ok=True)
    tmp = folder / "shard.json.tmp"
    tmp.write_bytes(shard_json)
    tmp.replace(folder / "shard.json")
    (folder / "key").write_text(key)


class _Bar:
    """Progress over the shards on stderr: a bar redrawn in place on a terminal, one line per
    finished shard otherwise (a log file), each with the time so far and the time left at the
    pace of the shards finished in this call."""

    WIDTH = 30

    def __init__(self, on: bool, shards: int, kept: int) -> None:
        self.on, self.shards, self.kept, self.done = on, shards, kept, kept
        self.started = time.monotonic()
        self.tty = on and sys.stderr.isatty()
        self.drawn = False
        if self.tty and kept < shards:
            self._draw("")

    def shard_done(self, k: int) -> None:
        self.done += 1
        if self.tty:
            self._draw(f" (shard {k} last)")
        else:
            _say(self.on, f"dialeval.ray: shard {k}/{self.shards} done, {self.done} of {self.shards}, {self._times()}")

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def _times(self) -> str:
        elapsed = time.monotonic() - self.started
        scored = self.done - self.kept
        left = self.shards - self.done
        eta = f", about {elapsed / scored * left:.0f} s left" if scored and left else ""
        return f"{elapsed:.0f} s{eta}"

    def _draw(self, last: str) -> None:
        self.drawn = True
        filled = self.WIDTH * self.done // self.shards
        sys.stderr.write(f"\rdialeval.ray [{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.shards} shards, {self._times()}{last}\x1b[K")
        sys.stderr.flush()


def _say(on: bool, line: str) -> None:
    if on:
        print(line, file=sys.stderr, flush=True)
