"""``dialeval.evaluate``: the main job from Python on 10,000 real items (DailyDialog++ dev
contexts, each with its human-written relevant responses and its random and adversarial
negatives, rated ``relevant`` 1 or 0, another relevant response as the reference), with the shipped checkpoints of the clone; the errors;
the cache that makes a second call cheap."""

import json
import os
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


def test_ten_thousand_items_with_the_shipped_checkpoints(tmp_path):
    encoder = encoder_or_skip()
    items = ddpp_items(10_000)
    assert len(items) == 10_000
    started = time.monotonic()
    report = dialeval.evaluate(items, out=tmp_path / "run", skip=("llm",), models=ROOT / "models", encoder=encoder, bootstrap=0)
    first = time.monotonic() - started
    assert len(report.scores) == 10_000
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
        assert row["n"] == 10_000 and row["statistic"] > 0.4 and row["pvalue"] < 1e-10, row
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
    with pytest.raises(dialeval.InputError, match=r"items\.jsonl:2.*ratngs"):
        dialeval.evaluate([good[0], {**good[1], "ratngs": {}}, good[2]], out=tmp_path / "a", skip=("llm",))
    with pytest.raises(dialeval.InputError, match="unknown families"):
        dialeval.evaluate(good, out=tmp_path / "b", skip=("bleu",))
    with pytest.raises(dialeval.InputError, match="references"):
        dialeval.evaluate(good, out=tmp_path / "c", references="median")
    with pytest.raises(dialeval.InputError, match="item 1: expected a dict"):
        dialeval.evaluate([good[0], "not an item"], out=tmp_path / "d")
    with pytest.raises(dialeval.DialevalError):
        dialeval.evaluate(tmp_path / "missing.jsonl", out=tmp_path / "e")
