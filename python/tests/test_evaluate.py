"""``dialeval.evaluate``: the main job from Python on 10,000 real items (DailyDialog++ dev
contexts, each with its human-written relevant responses and its random and adversarial
negatives, rated ``relevant`` 1 or 0, another relevant response as the reference), with the shipped checkpoints of the clone; the errors;
the cache that makes a second call cheap."""

import fcntl
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dialeval
from conftest import ROOT, shared_dir

MINILM = Path(os.environ.get("DIALEVAL_MINILM", Path.home() / ".cache/dialeval/models/all-MiniLM-L6-v2"))


def ddpp_items(limit):
    items = []
    for line in (shared_dir() / "data/dailydialog-plusplus/dev.json").read_text().splitlines():
        c = json.loads(line)
        positives = c["positive_responses"]
        for kind, label in (("positive_responses", 1), ("random_negative_responses", 0), ("adversarial_negative_responses", 0)):
            for j, r in enumerate(c[kind]):
                # Another relevant response of the context is the reference.
                reference = positives[1] if (label, j) == (1, 0) else positives[0]
                items.append({"id": f"{c['id']}/{kind}/{j}", "context": c["context"], "response": r, "references": [reference], "ratings": {"relevant": [label]}})
        if len(items) >= limit:
            return items[:limit]
    return items


def encoder_or_skip():
    if (MINILM / "model.safetensors").is_file():
        return MINILM
    if os.environ.get("DIALEVAL_REQUIRE_MINILM") == "1":
        raise RuntimeError(f"no all-MiniLM-L6-v2 at {MINILM} and DIALEVAL_REQUIRE_MINILM=1")
    pytest.skip("all-MiniLM-L6-v2 not fetched (scripts/fetch_minilm.sh)")


def test_four_thousand_items_with_the_shipped_checkpoints(tmp_path):
    encoder = encoder_or_skip()
    items = ddpp_items(4_000)
    assert len(items) == 4_000
    started = time.monotonic()
    report = dialeval.evaluate(items, out=tmp_path / "run", skip=("llm",), models=ROOT / "models", encoder=encoder, bootstrap=0)
    first = time.monotonic() - started
    assert len(report.scores) == 4_000
    assert [s["id"] for s in report.scores[:2]] == [items[0]["id"], items[1]["id"]]
    assert report.scores[0]["human"] == {"relevant": 1.0}
    for metric in ("SLM", "BERT-RUBER-unref", "Context-Cosine", "Length (words)", "BLEU-4", "BERTScore-F1"):
        assert all(isinstance(s["metrics"][metric], float) for s in report.scores), metric
    assert report.skipped == {
        "llm": "left out by skip=",
        "smatch": "no item has both a response graph and a reference graph",
        "fine_tuned": "no fine-tuned checkpoint given (none ships yet; `dialeval fine-tune` trains one)",
    }, report.skipped
    # The learned reference-free scores tell relevant responses from negatives.
    for metric in ("SLM", "BERT-RUBER-unref"):
        row = report.correlation(metric, "relevant")
        assert row["n"] == 4_000 and row["statistic"] > 0.4 and row["pvalue"] < 1e-10, row
    assert (report.out / "report.md").is_file() and (report.out / "correlations.json").is_file()
    # The same items again: every family from the cache.
    started = time.monotonic()
    again = dialeval.evaluate(items, out=tmp_path / "run", skip=("llm",), models=ROOT / "models", encoder=encoder, bootstrap=0)
    assert again.scores == report.scores
    assert time.monotonic() - started < first / 2, "the family cache serves the second call"


def test_without_shipped_checkpoints_the_learned_families_are_skipped_not_trained(tmp_path):
    encoder = encoder_or_skip()
    report = dialeval.evaluate(ddpp_items(60), out=tmp_path, skip=("embedding", "llm"), models=tmp_path / "none", encoder=encoder, bootstrap=0)
    assert set(report.skipped) == {"embedding", "llm", "bert_ruber", "slm", "fine_tuned", "smatch"}, report.skipped
    assert report.skipped["embedding"] == "left out by skip="
    for name in ("slm", "bert-ruber"):
        assert f"no shipped {name} checkpoint" in report.skipped[name.replace("-", "_")], report.skipped
    assert "SLM" not in report.scores[0]["metrics"] and "Context-Cosine" in report.scores[0]["metrics"]
    assert report.correlation("Length (words)", "relevant")["n"] == 60
    assert not (tmp_path / "models").exists(), "nothing was trained"


def test_without_a_models_folder_the_reason_says_none_was_given(tmp_path, monkeypatch):
    encoder = encoder_or_skip()
    monkeypatch.delenv("DIALEVAL_MODELS", raising=False)
    report = dialeval.evaluate(ddpp_items(20), out=tmp_path, skip=("embedding", "llm"), encoder=encoder, bootstrap=0)
    for name in ("slm", "bert_ruber"):
        assert "no folder of shipped checkpoints was given" in report.skipped[name], report.skipped
    assert not (tmp_path / "models").exists(), "nothing was trained"


def test_bad_items_and_settings_are_typed_errors_naming_the_place(tmp_path):
    good = ddpp_items(3)
    with pytest.raises(dialeval.InputError, match=r"item 1 at \$\.ratngs"):
        dialeval.evaluate([good[0], {**good[1], "ratngs": {}}, good[2]], out=tmp_path / "a", skip=("llm",))
    with pytest.raises(dialeval.InputError, match="unknown families"):
        dialeval.evaluate(good, out=tmp_path / "b", skip=("bleu",))
    with pytest.raises(dialeval.InputError, match="references"):
        dialeval.evaluate(good, out=tmp_path / "c", references="median")
    with pytest.raises(dialeval.InputError, match="item 1: expected a dict"):
        dialeval.evaluate([good[0], "not an item"], out=tmp_path / "d")
    with pytest.raises(dialeval.DialevalError):
        dialeval.evaluate(tmp_path / "missing.jsonl", out=tmp_path / "e")


# The families that need no encoder, no checkpoint and no endpoint: the fast hostile cases.
LIGHT = ("embedding", "context_cosine", "bert_ruber", "slm", "fine_tuned", "smatch", "llm")


def test_settings_are_the_librarys_typed_errors(tmp_path):
    good = ddpp_items(3)
    with pytest.raises(dialeval.InputError, match=r"^bootstrap = -1: expected a count, not negative$"):
        dialeval.evaluate(good, out=tmp_path / "a", skip=LIGHT, bootstrap=-1)
    with pytest.raises(dialeval.InputError, match=r"^chunk = 0: expected at least 1 item per chunk$"):
        dialeval.evaluate(good, out=tmp_path / "b", skip=LIGHT, chunk=0)
    with pytest.raises(dialeval.InputError, match="bootstrap = 1:"):
        dialeval.evaluate(good, out=tmp_path / "c", skip=LIGHT, bootstrap=1)
    with pytest.raises(dialeval.InputError, match="chunk = 2.5: expected an int"):
        dialeval.evaluate(good, out=tmp_path / "d", skip=LIGHT, chunk=2.5)


def test_items_and_folders_are_named_in_the_documented_errors(tmp_path):
    good = ddpp_items(3)
    taken = tmp_path / "a-file"
    taken.write_text("mine")
    with pytest.raises(dialeval.ResourceError, match="not a folder"):
        dialeval.evaluate(good, out=taken, skip=LIGHT)
    nan = {**good[1], "ratings": {"relevant": [float("nan")]}}
    with pytest.raises(dialeval.InputError, match=r"^item 1 at \$\.ratings\.relevant\[0\]: nan"):
        dialeval.evaluate([good[0], nan, good[2]], out=tmp_path / "b", skip=LIGHT)
    with pytest.raises(dialeval.InputError, match="single dict"):
        dialeval.evaluate(good[0], out=tmp_path / "c", skip=LIGHT)
    with pytest.raises(dialeval.ResourceError, match="missing.jsonl"):
        dialeval.evaluate(tmp_path / "missing.jsonl", out=tmp_path / "e", skip=LIGHT)
    # A path as bytes is a path, not an iterable of ints.
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in good))
    report = dialeval.evaluate(os.fsencode(path), out=tmp_path / "f", skip=LIGHT, bootstrap=0)
    assert [s["id"] for s in report.scores] == [i["id"] for i in good]


def test_a_users_items_file_in_out_is_left_alone(tmp_path):
    mine = tmp_path / "items.jsonl"
    mine.write_text("my own notes\n")
    report = dialeval.evaluate(ddpp_items(5), out=tmp_path, skip=LIGHT, bootstrap=0)
    assert len(report.scores) == 5
    assert mine.read_text() == "my own notes\n", "evaluate wrote over a file it did not create"


def test_a_folder_in_use_is_refused_as_the_command_refuses_it(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    with open(out / ".dialeval.lock", "w") as held:
        # Another run's hold on the folder (the lock the command and the library take).
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(dialeval.ResourceError, match="in use by another run"):
            dialeval.evaluate(ddpp_items(3), out=out, skip=LIGHT, bootstrap=0)
    assert len(dialeval.evaluate(ddpp_items(3), out=out, skip=LIGHT, bootstrap=0).scores) == 3


def test_a_pipe_is_read_once(tmp_path):
    items = ddpp_items(4)
    fifo = tmp_path / "items.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen([sys.executable, "-c", f"import sys; open({str(fifo)!r}, 'w').write(sys.stdin.read())"], stdin=subprocess.PIPE, text=True)
    writer.stdin.write("".join(json.dumps(i) + "\n" for i in items))
    writer.stdin.close()
    report = dialeval.evaluate(fifo, out=tmp_path / "out", skip=LIGHT, bootstrap=0)
    assert writer.wait(timeout=30) == 0
    assert [s["id"] for s in report.scores] == [i["id"] for i in items]


# The child takes Python's own Ctrl-C handler: a process started from a non-interactive shell's
# background job inherits SIGINT ignored, and Python then leaves it ignored.
CTRL_C = """
import json, signal, sys, dialeval
signal.signal(signal.SIGINT, signal.default_int_handler)
items = [json.loads(line) for line in open(sys.argv[1])]
try:
    dialeval.evaluate(items, out=sys.argv[2], skip=("llm",), encoder=sys.argv[3], models=sys.argv[4], chunk=200, bootstrap=0)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


def test_ctrl_c_stops_a_long_run_within_seconds_and_the_next_call_resumes(tmp_path):
    encoder = encoder_or_skip()
    items = ddpp_items(4000)
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    out = tmp_path / "out"
    args = [sys.executable, "-c", CTRL_C, str(path), str(out), str(encoder), str(ROOT / "models")]
    run = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Until a family has cached a chunk: the run is well under way.
    deadline = time.monotonic() + 300
    while not any((out / "metrics").rglob("*.json")) and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.2)
    time.sleep(0.5)
    assert run.poll() is None, run.communicate()
    run.send_signal(signal.SIGINT)
    asked = time.monotonic()
    stdout, stderr = run.communicate(timeout=60)
    stopped = time.monotonic() - asked
    assert run.returncode == 3 and "interrupted" in stdout, (run.returncode, stdout, stderr[-2000:])
    assert stopped < 10, f"{stopped:.1f} s from Ctrl-C to the end"
    assert any((out / "metrics").rglob("*.json")), "the finished chunks are cached"
    # The next call takes the cached chunks and finishes.
    report = dialeval.evaluate(items, out=out, skip=("llm",), encoder=encoder, models=ROOT / "models", chunk=200, bootstrap=0)
    assert len(report.scores) == 4000
    assert "chunks from the cache)" in (out / "report.md").read_text() or "| from the cache" in (out / "report.md").read_text()


def test_shards_scored_with_or_without_their_reports_merge_into_one_run(tmp_path):
    """``shard=(k, n)`` leaves ``shard.json`` for ``merge``; ``report=False`` leaves only it (and
    the caches), as the Ray tasks and the Slurm array score their shards. Either way the merge
    is the one-process run's files byte for byte."""
    items = ddpp_items(90)
    settings = dict(skip=LIGHT, bootstrap=0)
    one = dialeval.evaluate(items, out=tmp_path / "one", **settings)
    folders = [tmp_path / f"part{k}" for k in (1, 2, 3)]
    own = dialeval.evaluate(items, out=folders[0], shard=(1, 3), **settings)
    assert (folders[0] / "report.md").is_file() and (folders[0] / "shard.json").is_file()
    scored = [own.scores]
    for k in (2, 3):
        part = dialeval.evaluate(items, out=folders[k - 1], shard=(k, 3), report=False, **settings)
        left = sorted(p.name for p in folders[k - 1].iterdir())
        assert "shard.json" in left and "report.md" not in left and "scores.jsonl" not in left, left
        assert part.correlations == [] and all(s["human"] == {} for s in part.scores)
        scored.append(part.scores)
    by_id = {s["id"]: s["metrics"] for s in one.scores}
    assert sorted(s["id"] for part in scored for s in part) == sorted(by_id)
    assert all(s["metrics"] == by_id[s["id"]] for part in scored for s in part)
    merged = dialeval.merge(items, folders, out=tmp_path / "merged", bootstrap=0)
    assert merged.scores == one.scores and merged.correlations == one.correlations
    for f in ("scores.jsonl", "scores.csv", "correlations.json", "correlations.md"):
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "merged" / f).read_bytes(), f
    with pytest.raises(dialeval.InputError, match="report=False keeps only a shard's scores"):
        dialeval.evaluate(items, out=tmp_path / "no-shard", report=False, **settings)
    # The merge reads the shards, not the corpus again: it checks the corpus file's bytes
    # against the ones the shards were cut from.
    changed = [dict(i, response="something else") if n == 0 else i for n, i in enumerate(items)]
    with pytest.raises(dialeval.InputError, match="shard [123]/3 was cut from another corpus"):
        dialeval.merge(changed, folders, out=tmp_path / "other", bootstrap=0)
    # So a shard is cut from a regular file, never from a pipe it would consume.
    fifo = tmp_path / "items.fifo"
    os.mkfifo(fifo)
    with pytest.raises(dialeval.InputError, match="not a regular file"):
        dialeval.evaluate(fifo, out=tmp_path / "fifo-shard", shard=(1, 3), report=False, **settings)
