"""The Python API against the golden vectors of ../shared/golden, with the tolerances of the Rust
parity tests: BLEU 1e-9 (0-100 scale), ROUGE and METEOR 1e-12, correlation statistics 1e-12 and
p-values 1e-9 relative, PENMAN exact, Smatch at smatch's optimum on at least 99% of the pairs."""

import math

import numpy as np
import pytest

from conftest import number, read_json, read_jsonl, shared_dir
from dialeval import amr, metrics, stats


@pytest.fixture(scope="module")
def shared():
    return shared_dir()


def test_sentence_bleu_rouge_and_meteor_match_the_references(shared):
    rows = read_jsonl(shared / "golden/usr_personachat_text_metrics.jsonl")
    assert len(rows) == 240
    for row in rows:
        h, r = row["hypothesis"].strip(), row["reference"].strip()
        assert abs(metrics.sentence_bleu(h, [r]) - row["sentence_bleu"]["score"]) <= 1e-9, row["pair_index"]
        for stemming, key in ((False, "rouge"), (True, "rouge_stem")):
            got, want = metrics.rouge_l(h, [r], stemming=stemming), row[key]["rougeL"]
            for field in ("precision", "recall", "fmeasure"):
                assert abs(getattr(got, field) - want[field]) <= 1e-12, (row["pair_index"], key, field)
        assert abs(metrics.meteor(h, [r]) - row["meteor"]) <= 1e-12, row["pair_index"]


def test_corpus_bleu_takes_sacrebleus_reference_streams(shared):
    rows = read_jsonl(shared / "golden/usr_personachat_text_metrics.jsonl")
    golden = read_json(shared / "golden/usr_personachat_corpus_bleu.json")
    hyps = [r["hypothesis"].strip() for r in rows]
    refs = [[r["reference"].strip() for r in rows]]
    assert abs(metrics.corpus_bleu(hyps, refs) - golden["all"]["score"]) <= 1e-9


def close_p(got, want):
    if math.isnan(want):
        return math.isnan(got)
    if want < 1e-300:
        return abs(got - want) <= 1e-300
    return abs((got - want) / want) <= 1e-9


def check(got, want, label):
    stat, p = number(want["statistic"]), number(want["pvalue"])
    if math.isnan(stat):
        assert math.isnan(got.statistic), label
    else:
        assert abs(got.statistic - stat) <= 1e-12, (label, got, stat)
    if abs(1.0 - abs(stat)) > 1e-12:
        assert close_p(got.pvalue, p), (label, got, p)


def test_correlations_on_usr_personachat_match_scipy(shared):
    golden = read_json(shared / "golden/usr_personachat_correlations.json")
    assert len(golden["results"]) == 48
    for entry in golden["results"]:
        x = golden["metric_vectors"][entry["metric"]]
        y = np.array(golden["human_mean_vectors"][entry["criterion"]])  # a numpy array works too
        for fn, key in ((stats.pearson, "pearson"), (stats.spearman, "spearman"), (stats.kendall, "kendall_tau_b")):
            check(fn(x, y), entry[key], (entry["metric"], entry["criterion"], key))


def test_correlation_edge_cases_match_scipy(shared):
    cases = read_json(shared / "golden/correlation_edge_cases.json")["cases"]
    calls = [
        ("pearsonr", lambda x, y: stats.pearson(x, y)),
        ("spearmanr", lambda x, y: stats.spearman(x, y)),
        ("kendalltau", lambda x, y: stats.kendall(x, y)),
        ("kendalltau_method_asymptotic", lambda x, y: stats.kendall(x, y, method="asymptotic")),
        ("spearmanr_nan_policy_omit", lambda x, y: stats.spearman(x, y, nan_policy="omit")),
        ("kendalltau_nan_policy_omit", lambda x, y: stats.kendall(x, y, nan_policy="omit")),
        ("spearmanr_nan_policy_raise", lambda x, y: stats.spearman(x, y, nan_policy="raise")),
    ]
    checked = 0
    for case in cases:
        x, y = [number(v) for v in case["x"]], [number(v) for v in case["y"]]
        for key, call in calls:
            want = case.get(key)
            if want is None:
                continue
            if "error" in want:
                with pytest.raises(Exception):
                    call(x, y)
            else:
                check(call(x, y), want, (case["name"], key))
            checked += 1
    assert checked >= 29 * 3


def test_penman_decode_and_encode_match_penman_on_the_little_prince(shared):
    golden = read_jsonl(shared / "golden/little_prince_v3_penman.jsonl")
    graphs = amr.decode_all((shared / "data/amr-little-prince/amr-bank-struct-v3.0.txt").read_text())
    assert len(graphs) == len(golden) == 1562
    for g, want in zip(graphs, golden):
        assert g.top == want["top"], want["index"]
        assert sorted(g.triples, key=lambda t: (t[0], t[1], t[2] or "")) == [tuple(t) for t in want["triples_sorted"]], want["index"]
        assert list(g.metadata.items()) == list(want["metadata"].items()), want["index"]
        assert amr.encode(g) == want["encoded"], want["index"]
        assert amr.encode(g, metadata=False) == want["encoded_graph_only"], want["index"]
        assert sorted(amr.decode(amr.encode(g)).triples, key=str) == sorted(g.triples, key=str)


def test_smatch_reaches_smatchs_optimum(shared):
    rows = read_jsonl(shared / "golden/little_prince_smatch_random_pairs.jsonl")
    assert len(rows) == 210
    at_optimum = 0
    for row in rows[:200]:
        p, r, f1 = amr.smatch(row["amr1"], row["amr2"])
        best = row["smatch_optimal"]
        assert f1 <= best["f1"] + 1e-12, row["pair_index"]
        at_optimum += abs(f1 - best["f1"]) <= 1e-12 and abs(p - best["precision"]) <= 1e-12 and abs(r - best["recall"]) <= 1e-12
    assert at_optimum >= 198, f"{at_optimum}/200 at the optimum"
    for row in rows[200:]:
        assert amr.smatch(row["amr1"], row["amr2"]) == (1.0, 1.0, 1.0), row["pair_index"]
