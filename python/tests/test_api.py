"""Call shapes, results and errors of the Python API, without the golden vectors."""

import pytest

import dialeval
from dialeval import amr, metrics, stats


def test_the_readme_call_and_reference_layouts():
    assert abs(dialeval.metrics.sentence_bleu("a cat", ["the cat"]) - 50.0) < 1e-9
    assert metrics.sentence_bleu("a cat", "the cat") == metrics.sentence_bleu("a cat", ["the cat"]), "one reference as a string"
    # sacrebleu's layout: a list of reference streams, one reference per hypothesis in each.
    hyps = ["the cat sat on the mat", "a dog ran in the park"]
    assert abs(metrics.corpus_bleu(hyps, [hyps]) - 100.0) < 1e-9
    two = metrics.corpus_bleu(hyps, [["x y z w v", hyps[1]], [hyps[0], "p q r s t"]])
    assert abs(two - 100.0) < 1e-9, "each hypothesis matched by its reference in one of the streams"
    assert metrics.corpus_bleu(hyps, [["x y z w v", hyps[1]]]) < 100.0
    score = metrics.rouge_l("the cat sat", ["a cat sat down", "nothing here"])
    p, r, f = score
    assert (p, r, f) == (score.precision, score.recall, score.fmeasure)
    assert abs(f - 2 * p * r / (p + r)) < 1e-12


def test_nidf_ranks_generic_replies_below_specific_ones():
    generic, specific = metrics.nidf("I don't know."), metrics.nidf("My grandmother grows tomatoes in her greenhouse.")
    assert 0.0 <= generic < 0.2 and 0.4 < specific <= 1.0, (generic, specific)
    assert metrics.nidf("I DON'T know!!") == generic, "case and punctuation do not count"
    assert metrics.nidf(" ?! ") is None, "no word, no score"


def test_statistics_unpack_like_scipy_and_take_numpy():
    np = pytest.importorskip("numpy")
    r, p = stats.spearman(np.arange(10.0), np.arange(10.0) ** 2)
    assert r == pytest.approx(1.0) and p < 1e-6
    res = stats.kendall([1, 2, 3, 4], [1, 3, 2, 4])
    assert (res[0], res[1]) == (res.statistic, res.pvalue) and res.n == 4
    assert stats.pearson([1, 2, 3], [1, 2, float("nan")]).statistic != stats.pearson([1, 2, 3], [1, 2, float("nan")]).statistic, "NaN propagates"


def test_errors_are_typed_with_the_rust_message():
    with pytest.raises(dialeval.InputError, match="reference stream 0 has 2 references for 1 hypotheses"):
        metrics.corpus_bleu(["a"], [["x", "y"]])
    with pytest.raises(dialeval.InputError, match="nan_policy"):
        stats.spearman([1, 2], [1, 2], nan_policy="drop")
    with pytest.raises(dialeval.InputError):
        stats.pearson([1, 2, 3], [1, 2])
    with pytest.raises(dialeval.AmrError, match="line 1, column"):
        amr.decode("(w / want-01 :ARG0 (b / boy)")
    with pytest.raises(dialeval.AmrError):
        amr.smatch("(a / alpha)", "not penman")
    assert issubclass(dialeval.InputError, dialeval.DialevalError) and issubclass(dialeval.AmrError, dialeval.DialevalError)
    with pytest.raises(TypeError):
        metrics.sentence_bleu("a", 3)


def test_graphs_round_trip_and_build_from_triples():
    g = amr.decode("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))")
    assert g.top == "w" and ("g", ":ARG0", "b") in g.triples
    again = amr.decode(amr.encode(g))
    assert again.triples == g.triples
    built = amr.Graph(g.triples, top="w")
    assert sorted(built.triples, key=str) == sorted(g.triples, key=str), "the same graph, laid out from its triples"
    assert amr.smatch(amr.encode(g), amr.encode(built)) == (1.0, 1.0, 1.0)


def test_long_work_releases_the_gil():
    import threading

    texts = ["the cat sat on the mat"] * 2000
    out = []
    threads = [threading.Thread(target=lambda: out.append(metrics.corpus_bleu(texts, [texts]))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [pytest.approx(100.0)] * 4


def test_edges_of_the_float_range_and_overlong_texts():
    # scipy 1.17.1's pearsonr on the same subnormal series (metrics/tests/fixtures/scipy_float_edges.json).
    x = [v * 1e-310 for v in (1.0, 2.0, 3.5, 4.0, 7.0, 6.5, 9.0, 11.0)]
    y = [v * 1e-310 for v in (2.0, 1.5, 4.0, 3.0, 8.0, 7.5, 8.5, 12.0)]
    r, p = stats.pearson(x, y)
    assert abs(r - 0.9751742343309069) < 1e-12 and abs(p - 3.7542775412458154e-05) < 1e-12, (r, p)
    # Two 20,001-word texts: refused at once (rouge-score would run for minutes), not run.
    words = "w " * 20_001
    with pytest.raises(dialeval.InputError, match="too long for ROUGE-L"):
        metrics.rouge_l(words, [words])
