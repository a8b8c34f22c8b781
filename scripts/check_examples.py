#!/usr/bin/env python3
"""End-to-end check of the amr-graph examples on every AMR file (run by .ci/run).

    python3 scripts/check_examples.py PROFILE_DIR [SHARED_DIR]   # e.g. target/debug

- `penman FILE` exits 0 and prints one JSON object per graph or error, with the documented fields;
- `smatch TEST GOLD` prints one object per pair and a final corpus object; on the full Little
  Prince v1.6 vs v3.0 releases its corpus F1 equals smatch 1.0.4's 0.9627710817580442.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
examples = Path(sys.argv[1]) / "examples"
dialeval = Path(sys.argv[1]) / "dialeval"  # the command (crate dialeval-cli), built by the tests
minilm = Path(os.environ.get("DIALEVAL_MINILM", Path.home() / ".cache/dialeval/models/all-MiniLM-L6-v2"))
shared = Path(sys.argv[2]) if len(sys.argv) > 2 else root.parent / "shared"
GRAPH_FIELDS = {"id", "snt", "top", "triples_sorted", "encoded_graph_only"}
_since = time.monotonic()


def say(line):
    """Prints a check's line with the seconds it took (since the previous line)."""
    global _since
    now = time.monotonic()
    print(f"[{now - _since:5.1f} s] {line}", flush=True)
    _since = now


def run(*args):
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, args))} exited {out.returncode}: {out.stderr[-2000:]}")
    return [json.loads(line) for line in out.stdout.splitlines()]


files = sorted((root / "data" / "amr").glob("*.amr.txt"))
if (shared / "data").is_dir():
    files += sorted(p for p in (shared / "data").rglob("*.txt") if "amr" in str(p.relative_to(shared)).lower())
checked = 0
for f in files:
    rows = run(examples / "penman", f)
    for row in rows:
        keys = set(row)
        if keys != GRAPH_FIELDS and keys != {"error", "line"}:
            sys.exit(f"FAILED: {f}: unexpected fields {sorted(keys)}")
    graphs = sum("error" not in r for r in rows)
    say(f"penman  {f.name}: {graphs} graphs, {len(rows) - graphs} reported errors")
    checked += 1

pairs = [(root / "data/amr/little-prince-v1.6-first40.amr.txt", root / "data/amr/little-prince-v3.0-first40.amr.txt")]
lp = shared / "data/amr-little-prince"
if lp.is_dir():
    pairs.append((lp / "amr-bank-struct-v1.6.txt", lp / "amr-bank-struct-v3.0.txt"))
for test, gold in pairs:
    rows = run(examples / "smatch", test, gold)
    corpus = rows[-1]["corpus"]
    per_pair = rows[:-1]
    if any(set(r) != {"index", "match", "test_triples", "gold_triples", "precision", "recall", "f1"} for r in per_pair):
        sys.exit(f"FAILED: smatch {test.name}: malformed pair rows")
    say(f"smatch  {test.name} vs {gold.name}: {len(per_pair)} pairs, corpus F1 {corpus['f1']:.6f}")
    if test.name == "amr-bank-struct-v1.6.txt" and abs(corpus["f1"] - 0.9627710817580442) > 1e-12:
        sys.exit(f"FAILED: corpus F1 {corpus['f1']} differs from smatch 1.0.4's 0.9627710817580442")
# text_metrics and correlate on the golden USR-PersonaChat pairs
golden_pairs = shared / "golden/usr_personachat_text_metrics.jsonl"
if golden_pairs.is_file():
    want = [json.loads(line) for line in golden_pairs.read_text().splitlines()]
    got = run(examples / "text_metrics", golden_pairs)
    if len(got) != len(want) + 1 or "corpus_bleu" not in got[-1]:
        sys.exit("FAILED: text_metrics: one line per pair plus a corpus line expected")
    for g, w in zip(got, want):
        if abs(g["sentence_bleu"]["score"] - w["sentence_bleu"]["score"]) > 1e-9 or abs(g["meteor"] - w["meteor"]) > 1e-12:
            sys.exit(f"FAILED: text_metrics pair {w['pair_index']} differs from the golden values")
        for kind in ("rouge", "rouge_stem"):
            for t in ("rouge1", "rouge2", "rougeL"):
                if abs(g[kind][t]["fmeasure"] - w[kind][t]["fmeasure"]) > 1e-12:
                    sys.exit(f"FAILED: text_metrics pair {w['pair_index']} {kind}.{t}")
    corpus = json.loads((shared / "golden/usr_personachat_corpus_bleu.json").read_text())["all"]["score"]
    if abs(got[-1]["corpus_bleu"]["score"] - corpus) > 1e-9:
        sys.exit("FAILED: text_metrics corpus BLEU")
    say(f"text_metrics: {len(want)} pairs and corpus BLEU match the golden values")
    corr = json.loads((shared / "golden/usr_personachat_correlations.json").read_text())
    entry = next(r for r in corr["results"] if r["metric"] == "meteor" and r["criterion"] == "Overall")
    out = run(examples / "correlate", golden_pairs, "--x", "meteor", "--y", "human.Overall")[0]
    for ours, theirs in (("pearson", "pearson"), ("spearman", "spearman"), ("kendall", "kendall_tau_b")):
        if abs(out[ours]["statistic"] - entry[theirs]["statistic"]) > 1e-12:
            sys.exit(f"FAILED: correlate {ours}")
        lo, hi = out[ours]["ci"]
        if not lo < out[ours]["statistic"] < hi:
            sys.exit(f"FAILED: correlate {ours} interval does not contain the estimate")
    say("correlate: METEOR x Overall matches scipy")
# amr_parse with an external parser (a script playing one) against gold graphs: provenance
# written, every graph valid, Smatch reported
with tempfile.TemporaryDirectory() as tmp:
    out_file = Path(tmp) / "parsed.amr.txt"
    fake = root / "amr-parse/tests/fixtures/fake_parser.py"
    done = subprocess.run([str(examples / "amr_parse"), "--input", str(root / "data/amr/little-prince-v3.0-first40.amr.txt"), "--gold", "--limit", "8",
                           "--command", f"python3 {fake}", "--out", str(out_file)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: amr_parse: {done.stderr}")
    report = json.loads(done.stdout)
    if report["stats"]["sentences"] != 8 or report["stats"]["valid_first"] != 8 or not 0.0 <= report["smatch_f1"] < 1.0:
        sys.exit(f"FAILED: amr_parse report {report}")
    if out_file.read_text().count("# ::parser command") != 8:
        sys.exit("FAILED: amr_parse provenance")
say("amr_parse: command parser over the line protocol, 8 graphs with provenance and Smatch against gold")
# dataset_stats on every corpus kind
stats_runs = [("grade", root / "datasets/tests/fixtures/grade/evaluation", "items", 7),
              ("jsonl", root / "datasets/tests/fixtures/user.jsonl", "items", 2)]
if (shared / "data").is_dir():
    d = shared / "data"
    stats_runs += [("usr", d / "usr-personachat/pc_usr_data.json", "items", 300),
                   ("fed-dialogue", d / "fed/fed_data.json", "items", 125),
                   ("ddpp", d / "dailydialog-plusplus/test.json", "contexts", 1142),
                   ("diplomacy", d / "amr-diplomacy/dip-all-amr-smosher.txt", "graphs", 8882)]
for kind, path, key, want in stats_runs:
    out = json.loads(subprocess.run([str(examples / "dataset_stats"), kind, str(path)], capture_output=True, text=True, check=True).stdout)
    if out[key] != want:
        sys.exit(f"FAILED: dataset_stats {kind}: {key} = {out[key]}, expected {want}")
say(f"dataset_stats: {len(stats_runs)} corpora counted as expected")
# train_slm (a small Diplomacy run with gold AMR) and score_slm on the JSONL fixture
if (shared / "data/amr-diplomacy").is_dir():
    with tempfile.TemporaryDirectory() as tmp:
        logs = run(examples / "train_slm", "--data", "diplomacy", "--out", tmp, "--epochs", "1", "--limit", "200",
                   "--d-model", "16", "--layers", "1", "--shared", shared)
        epochs = [l for l in logs if "epoch" in l]
        if len(epochs) != 1 or not 0.0 <= epochs[0]["dev_auc"] <= 1.0 or not 0.0 <= logs[-1]["test"]["auc"] <= 1.0:
            sys.exit(f"FAILED: train_slm log {logs}")
        scores = run(examples / "score_slm", tmp, root / "datasets/tests/fixtures/user.jsonl")
        if len(scores) != 2 or not all(0.0 <= s["score"] <= 1.0 for s in scores):
            sys.exit(f"FAILED: score_slm {scores}")
    say("train_slm / score_slm: trained one epoch and scored the fixture")
# bert_ruber train (the library's RuberTraining) at toy size on DailyDialog++'s positives with
# MiniLM: one epoch, its log, its data record and a loadable model
if (shared / "data/dailydialog-plusplus").is_dir() and (minilm / "model.safetensors").is_file():
    with tempfile.TemporaryDirectory() as tmp:
        logs = run(examples / "bert_ruber", "--encoder", minilm, "--shared", shared, "train", "--data", "positives", "--contexts", "60", "--epochs", "1", "--out", tmp)
        if len(logs) != 1 or logs[0]["epoch"] != 1 or not 0.0 <= logs[0]["dev_auc"] <= 1.0:
            sys.exit(f"FAILED: bert_ruber train log {logs}")
        if json.loads((Path(tmp) / "data.json").read_text())["data"] != "positives" or not (Path(tmp) / "best").exists():
            sys.exit("FAILED: bert_ruber train left no data record or best model")
    say("bert_ruber train: one epoch on 60 contexts, its data record and best model")
# gpu_bench at toy size on flex. Its wgpu run is not repeated here: on lavapipe it takes two
# minutes (every kernel shape compiled on the CPU), and the same entry points (MiniLM, an SLM
# trained and scored, BERT-RUBER trained and scored) run on wgpu against flex in
# slm-model/tests/wgpu.rs and wgpu_train.rs.
with tempfile.TemporaryDirectory() as tmp:
    bench = Path(tmp) / "bench.json"
    out = subprocess.run([str(examples / "gpu_bench"), "--devices", "cpu", "--sentences", "16", "--pairs", "32",
                          "--repeats", "1", "--data", str(root / "data"), "--out", str(bench)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAILED: gpu_bench exited {out.returncode}: {out.stderr[-2000:]}")
    rows = json.loads(bench.read_text())
    keys = ("minilm_sentences_per_s", "slm_train_step_ms", "slm_scored_pairs_per_s", "ruber_epoch_s")
    if [r["device"] for r in rows] != ["cpu"] or not all(r[k] > 0 for r in rows for k in keys) or "| cpu |" not in out.stdout:
        sys.exit(f"FAILED: gpu_bench {rows} {out.stdout}")
say("gpu_bench: MiniLM, SLM step and scoring, BERT-RUBER epoch timed on flex")
# train_slm on the training mix at toy size: the pretrained text side with the knowledge channel
# reading the nearest knowledge sentence (Topical-Chat in the mix) and the cross-encoded text
# side, tested with graphs withheld; each model then scores the JSONL fixture (one item with
# knowledge: its sentences' vectors, or the cross model's token states, read through the
# shared cache)
if (shared / "data/topical-chat").is_dir():
    for text_encoder, extra in (("pretrained", ["--topical", "yes", "--knowledge", "yes", "--knowledge-unit", "sentence", "--knowledge-dropout", "0.5"]),
                                ("cross", ["--topical", "no"])):
        with tempfile.TemporaryDirectory() as tmp:
            logs = run(examples / "train_slm", "--data", "mix", *extra, "--out", tmp, "--epochs", "1", "--limit", "400",
                       "--text-encoder", text_encoder, "--d-model", "16", "--layers", "1", "--shared", shared)
            test = logs[-1]["test"]
            if not (0.0 <= test["auc_random"] <= 1.0 and 0.0 <= test["graphs_withheld"]["auc"] <= 1.0):
                sys.exit(f"FAILED: train_slm --data mix --text-encoder {text_encoder} {logs}")
            if text_encoder == "pretrained" and json.loads((Path(tmp) / "featurizer.json").read_text()).get("knowledge_unit") != "sentence":
                sys.exit("FAILED: train_slm --knowledge-unit sentence is not saved in featurizer.json")
            scores = run(examples / "score_slm", tmp, root / "datasets/tests/fixtures/user.jsonl")
            if len(scores) != 2 or not all(0.0 <= s["score"] <= 1.0 for s in scores):
                sys.exit(f"FAILED: score_slm ({text_encoder}) {scores}")
    say("train_slm --data mix: pretrained (knowledge, nearest sentence) and cross-encoded text sides, tested with and without graphs; score_slm on both")
# amr_experiment (issue 9's grid) at toy size: gated and text-only on 30 silver-AMR contexts
if (shared / "data/silver-amr").is_dir():
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([str(examples / "amr_experiment"), "--out", tmp, "--seeds", "0", "--modes", "gated,text_only",
                              "--epochs", "1", "--contexts", "30", "--rest-contexts", "20", "--shared", str(shared)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"FAILED: amr_experiment exited {out.returncode}: {out.stderr[-2000:]}")
        rows = json.loads((Path(tmp) / "results.json").read_text())
        if sorted(r["mode"] for r in rows) != ["gated", "text_only"] or not all(0.0 <= r["test100_auc_adversarial"] <= 1.0 and len(r["usr_scores"]) == 300 for r in rows):
            sys.exit(f"FAILED: amr_experiment results {[{k: v for k, v in r.items() if k != 'usr_scores'} for r in rows]}")
        usr = json.loads((Path(tmp) / "usr_correlations.json").read_text())["rows"]
        cells = {(r["metric"], r["criterion"]) for r in usr if r["kind"] == "spearman" and r["ci"] is not None}
        if len(cells) != 2 * 6 or not (Path(tmp) / "usr_spearman.png").is_file():
            sys.exit(f"FAILED: amr_experiment USR correlations {sorted(cells)}")
        if "graphs for 4500 of 4500" not in out.stderr:
            sys.exit(f"FAILED: amr_experiment coverage line missing: {out.stderr[-2000:]}")
    say("amr_experiment: gated and text-only trained on silver AMR, USR correlations with intervals")
# evaluate (the main job) on the bundled default, killed once and restarted: finished metric
# families must come from the cache, and the report must be complete
with tempfile.TemporaryDirectory() as tmp:
    cmd = [str(examples / "evaluate"), "--out", tmp, "--skip", "llm"]
    first = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 1200
    while not any((Path(tmp) / "metrics/bert_ruber").glob("*.json")):
        if first.poll() is not None or time.time() > deadline:
            sys.exit(f"FAILED: evaluate ended before caching bert_ruber: {first.stderr.read()}")
        time.sleep(1)
    time.sleep(5)
    first.kill()
    first.wait()
    first_err = first.stderr.read()
    second = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if second.returncode != 0:
        sys.exit(f"FAILED: evaluate after a kill: {second.stderr}")
    for family in ("lexical", "embedding", "bert_ruber"):
        if f"evaluate: {family}: cached" not in second.stderr:
            sys.exit(f"FAILED: evaluate recomputed {family} after the restart: {second.stderr}")
    report = json.loads((Path(tmp) / "correlations.json").read_text())
    metrics = {r["metric"] for r in report["turn_level"]["rows"]}
    want = {"Length (words)", "NIDF", "BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1", "BERT-RUBER-unref", "BERT-RUBER-ref", "SLM", "Smatch", "Combined", "Combined-Coherence", "Combined-Engagement"}
    if not want <= metrics:
        sys.exit(f"FAILED: evaluate report lacks {want - metrics}")
    for family, folder in (("slm", "slm"), ("bert_ruber", "bert-ruber")):
        if f"evaluate: {family}: shipped checkpoint models/all-mpnet-base-v2/{folder}" not in first_err + second.stderr:
            sys.exit(f"FAILED: evaluate did not use the shipped {family} checkpoint of the default encoder: {first_err}\n{second.stderr}")
    # The default encoder is all-mpnet-base-v2, and the report names it and every checkpoint.
    models = {(m["kind"], m["name"]): m for m in report["provenance"]["models"]}
    encoder = models.get(("encoder", "all-mpnet-base-v2"))
    if encoder is None or encoder["digest"] != "bc5a24fca19e1b00" or set(encoder["families"]) != {"embedding", "context_cosine", "bert_ruber", "slm"}:
        sys.exit(f"FAILED: the report does not name the default encoder: {report['provenance']['models']}")
    for folder in ("bert-ruber", "slm"):
        if len(models.get(("checkpoint", f"models/all-mpnet-base-v2/{folder}"), {}).get("digest", "")) != 64:
            sys.exit(f"FAILED: the report does not name the {folder} checkpoint with its sha256: {report['provenance']['models']}")
    if "- encoder `all-mpnet-base-v2` (fingerprint `bc5a24fca19e1b00`)" not in (Path(tmp) / "report.md").read_text():
        sys.exit("FAILED: report.md does not name the encoder")
    # The shipped learned scorers and every metric that encodes must agree with people on the
    # bundled USR-PersonaChat: a positive, significant Spearman with the human Overall score
    # (they anti-correlated when trained on DailyDialog++ dev alone).
    for metric in ("SLM", "BERT-RUBER-unref", "BERTScore-F1", "Context-Cosine", "Combined", "Combined-Coherence", "Combined-Engagement"):
        row = next(r for r in report["turn_level"]["rows"] if r["metric"] == metric and r["criterion"] == "Overall" and r["kind"] == "spearman")
        if not (row["statistic"] > 0.1 and row["pvalue"] < 0.05):
            sys.exit(f"FAILED: {metric} vs human Overall: Spearman {row['statistic']:.3f} (p = {row['pvalue']:.2g})")
    lengths = {m["metric"]: m["length"]["spearman"] for m in report["metrics"] if m["length"]}
    if "Length (words)" not in lengths or abs(lengths["Length (words)"] - 1.0) > 1e-9:
        sys.exit(f"FAILED: the length baseline's Spearman with length is not 1: {lengths}")
    lines = (Path(tmp) / "scores.jsonl").read_text().splitlines()
    for f in ("report.md", "correlations.md", "scores.csv", "plots/heatmap_spearman.png", "plots/heatmap_spearman.svg", "plots/scatter_overall.png"):
        if not (Path(tmp) / f).is_file():
            sys.exit(f"FAILED: evaluate wrote no {f}")
    if len(lines) != 300 or "llm: left out by --skip" not in (Path(tmp) / "report.md").read_text():
        sys.exit("FAILED: evaluate scores.jsonl or skipped list")
    # The dialeval command runs the same program: the same table, the same files.
    cli = subprocess.run([str(dialeval), "evaluate", "--out", f"{tmp}/cli", "--skip", "llm"], cwd=root, capture_output=True, text=True)
    if cli.returncode != 0 or cli.stdout != second.stdout or not second.stdout.startswith("| metric |"):
        sys.exit(f"FAILED: dialeval evaluate's table differs from the example's:\n{cli.stdout}\n{second.stdout}\n{cli.stderr[-2000:]}")
    if (Path(tmp) / "cli/scores.jsonl").read_text() != (Path(tmp) / "scores.jsonl").read_text():
        sys.exit("FAILED: dialeval evaluate's scores.jsonl differs from the example's")
say("evaluate: killed and restarted from its caches; dialeval evaluate prints the same table")
# evaluate in 3 shards and merged: byte for byte the files of a single run (every family but the
# LLM judge, on all-MiniLM-L6-v2 one flag away: the learned families and their shipped MiniLM
# checkpoints included)
with tempfile.TemporaryDirectory() as tmp:
    base = [str(examples / "evaluate"), "--skip", "llm", "--encoder", str(minilm)]
    runs = [base + ["--out", f"{tmp}/whole"]] + [base + ["--shard", f"{k}/3", "--out", f"{tmp}/part{k}"] for k in (1, 2, 3)]
    runs.append([str(dialeval), "merge"] + [f"{tmp}/part{k}" for k in (3, 1, 2)] + ["--out", f"{tmp}/merged"])
    for cmd in runs:
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"FAILED: {' '.join(cmd)}: {done.stderr[-2000:]}")
    for f in ("scores.jsonl", "scores.csv", "correlations.md", "correlations.json"):
        if (Path(tmp) / "whole" / f).read_bytes() != (Path(tmp) / "merged" / f).read_bytes():
            sys.exit(f"FAILED: evaluate merge: {f} differs from the single run's")

    def without_seconds(text):
        rows = []
        for line in text.splitlines():
            cells = line.split(" | ")
            if line.startswith("| ") and len(cells) == 4 and cells[2].replace(".", "", 1).isdigit():
                cells[2] = "-"
            rows.append(" | ".join(cells))
        return "\n".join(rows)
    whole_report, merged_report = ((Path(tmp) / d / "report.md").read_text() for d in ("whole", "merged"))
    if without_seconds(whole_report) != without_seconds(merged_report):
        sys.exit(f"FAILED: evaluate merge: report.md differs from the single run's beyond its seconds:\n{whole_report}\n---\n{merged_report}")
    # merge scores nothing: a scoring flag given to it is refused, not ignored.
    bad = subprocess.run([str(examples / "evaluate"), "merge", f"{tmp}/part1", "--skip", "slm", "--out", f"{tmp}/bad"], cwd=root, capture_output=True, text=True)
    if bad.returncode == 0 or "evaluate merge does not use --skip" not in bad.stderr:
        sys.exit(f"FAILED: evaluate merge accepted --skip: {bad.stderr}")
say("evaluate --shard k/3 + evaluate merge: scores, correlations and report.md (but its seconds) byte for byte those of a single run")
# The Slurm scripts (scripts/slurm/), run as Slurm would run them (an array of 3 tasks, then the
# merge) on 60 DailyDialog++ items: the merged files are those of a single run.
with tempfile.TemporaryDirectory() as tmp:
    items = Path(tmp) / "items.jsonl"
    lines = []
    for line in (shared / "data/dailydialog-plusplus/dev.json").read_text().splitlines()[:10]:
        c = json.loads(line)
        for j, r in enumerate(c["positive_responses"] + c["random_negative_responses"]):
            lines.append(json.dumps({"id": f"{c['id']}/{j}", "context": c["context"], "response": r, "references": [c["positive_responses"][0]], "ratings": {"relevant": [int(j < len(c["positive_responses"]))]}}))
    items.write_text("\n".join(lines[:60]) + "\n")
    flags = "--skip llm,embedding,context_cosine,bert_ruber,slm,fine_tuned --bootstrap 0"
    env = dict(os.environ, INPUT=str(items), OUT=f"{tmp}/slurm", SHARDS="3", EXTRA=flags, MERGE_EXTRA="--bootstrap 0", PATH=f"{dialeval.parent}:{os.environ['PATH']}")
    for k in (1, 2, 3):
        done = subprocess.run(["bash", "scripts/slurm/evaluate_shard.sbatch"], cwd=root, env=dict(env, SLURM_ARRAY_TASK_ID=str(k)), capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"FAILED: scripts/slurm/evaluate_shard.sbatch task {k}: {done.stderr[-2000:]}")
    for k in (1, 2, 3):
        left = sorted(p.name for p in (Path(tmp) / f"slurm/shard-{k}").iterdir())
        if "shard.json" not in left or "report.md" in left or "scores.jsonl" in left:
            sys.exit(f"FAILED: evaluate --scores-only left {left} (expected shard.json and the caches, no report)")
    done = subprocess.run(["bash", "scripts/slurm/merge.sbatch"], cwd=root, env=env, capture_output=True, text=True)
    whole = subprocess.run([str(dialeval), "evaluate", "--corpus", "jsonl", "--input", str(items), "--out", f"{tmp}/whole", *flags.split()], cwd=root, capture_output=True, text=True)
    if done.returncode != 0 or whole.returncode != 0:
        sys.exit(f"FAILED: scripts/slurm/merge.sbatch: {done.stderr[-2000:]} {whole.stderr[-2000:]}")
    for f in ("scores.jsonl", "scores.csv", "correlations.md", "correlations.json"):
        if (Path(tmp) / "whole" / f).read_bytes() != (Path(tmp) / "slurm/merged" / f).read_bytes():
            sys.exit(f"FAILED: scripts/slurm: {f} differs from the single run's")
say("scripts/slurm: an array of 3 shard tasks (--scores-only: shard.json, no report) and the merge give the single run's files")
# evaluate on hostile input (issue 41): a 5,000-level response graph given inline, an AMR file
# with a 10,000-level graph, an empty graph and a sentence without its graph, a blank response, an
# empty context, overflowing ratings and a 1.5 MB response, with every family but the LLM judge
with tempfile.TemporaryDirectory() as tmp:
    t = Path(tmp)
    def chain(n):
        return "".join(f"(n{i} / thing :ARG0 " for i in range(n))[:-len(" :ARG0 ")] + ")" * n
    rows = [{"id": f"plain-{k}", "context": ["what did you do today"], "response": "we stayed home " + "and slept " * k,
             "references": ["we stayed home"], "ratings": {"overall": [1 + k % 5, 1 + (k * 3) % 5]}} for k in range(14)]
    rows += [
        {"id": "deep-graph", "context": ["and then"], "response": {"text": "we went far away", "amr": chain(5000)}, "references": ["we went out"], "ratings": {"overall": [3]}},
        {"id": "blank", "context": ["hello"], "response": "  ", "references": ["we stayed home"], "ratings": {"overall": [1]}},
        {"id": "opening", "context": [], "response": "hi there, how are you", "references": ["hello"], "ratings": {"overall": [4]}},
        {"id": "huge-rating", "context": ["hi"], "response": "we stayed home today", "references": ["we stayed home"], "ratings": {"overall": [1e308, 1e308]}},
        {"id": "long", "context": ["tell me everything"], "response": "word " * 300000, "references": ["we stayed home"], "ratings": {"overall": [2]}},
    ]
    corpus = t / "hostile.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    amr = t / "hostile.amr.txt"
    amr.write_text(f"# ::id deep\n# ::snt we stayed home\n{chain(10000)}\n\n# ::id empty\n# ::snt hello\n()\n\n# ::id sentence-only\n# ::snt hi\n\n"
                   "# ::id ok\n# ::snt we went out\n(g / go-02 :ARG0 (w / we) :direction (o / out))\n")
    cmd = [str(examples / "evaluate"), "--corpus", "jsonl", "--input", str(corpus), "--amr", str(amr), "--skip", "llm", "--encoder", str(minilm), "--out", str(t / "out")]
    runs = [subprocess.run(cmd, cwd=root, capture_output=True, text=True) for _ in range(2)]
    for done in runs:
        if done.returncode != 0:
            sys.exit(f"FAILED: evaluate on hostile input: {done.stderr[-3000:]}")
    err = runs[0].stderr
    for want in ("hostile.amr.txt:1: the graph is nested 10000 levels deep", "hostile.amr.txt:5: the graph `()` has no node", "hostile.amr.txt:9: a block with ::id or ::snt but no graph"):
        if want not in err:
            sys.exit(f"FAILED: evaluate did not name the bad AMR block {want!r}: {err[-3000:]}")
    if "damaged" in runs[1].stderr or "torn" in runs[1].stderr:
        sys.exit(f"FAILED: the second run found the embedding cache damaged: {runs[1].stderr[-3000:]}")
    scores = {r["id"]: r for r in map(json.loads, (t / "out/scores.jsonl").read_text().splitlines())}
    blank = scores["blank"]["metrics"]
    if any(blank.get(m) is not None for m in ("Length (words)", "BLEU-4", "BERTScore-F1", "BERT-RUBER-unref", "SLM", "Combined")):
        sys.exit(f"FAILED: a blank response was scored: {blank}")
    for item in ("opening", "long", "huge-rating", "plain-3"):
        if any(scores[item]["metrics"].get(m) is None for m in ("BERT-RUBER-unref", "SLM", "Combined")):
            sys.exit(f"FAILED: {item} was not scored: {scores[item]['scores']}")
    if scores["deep-graph"]["metrics"].get("Smatch") is not None:
        sys.exit(f"FAILED: the 5,000-level response graph got a Smatch score: {scores['deep-graph']['scores']}")
    report = (t / "out/report.md").read_text()
    for want in ("1 items with an empty response are not scored: blank", "1 items have an empty context and are scored as conversation openings",
                 "deep-graph: response graph: graph nested deeper than 512 levels"):
        if want not in report:
            sys.exit(f"FAILED: report.md does not say {want!r}:\n{report}")
    turn = json.loads((t / "out/correlations.json").read_text())["turn_level"]["rows"]
    n_length = {r["n"] for r in turn if r["metric"] == "Length (words)" and r["criterion"] == "Overall"}
    if n_length != {len(rows) - 1}:
        sys.exit(f"FAILED: n of Length vs Overall is {n_length}, expected {len(rows) - 1} (every rated item but the blank one)")
    strict = subprocess.run(cmd[:-2] + ["--strict-amr", "--out", str(t / "strict")], cwd=root, capture_output=True, text=True)
    if strict.returncode == 0 or "hostile.amr.txt:1" not in strict.stderr:
        sys.exit(f"FAILED: evaluate --strict-amr accepted a graph beyond the limits: {strict.stderr[-2000:]}")
    # Two runs into one folder at once: the second, started while the first holds the folder's
    # lock, is refused at the start; the first completes.
    shared_out = t / "shared-out"
    first = subprocess.Popen(cmd[:-1] + [str(shared_out)], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not (shared_out / ".dialeval.lock").exists() and first.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    second = subprocess.run(cmd[:-1] + [str(shared_out)], cwd=root, capture_output=True, text=True)
    first_rc, first_err = first.wait(), first.stderr.read()
    if first_rc != 0 or second.returncode == 0 or f"in use by another run (pid {first.pid} since" not in second.stderr:
        sys.exit(f"FAILED: two runs into one --out: first exited {first_rc} ({first_err[-500:]}), second {second.returncode} ({second.stderr[-500:]})")
    if (shared_out / ".dialeval.lock").exists():
        sys.exit("FAILED: a finished run left its lock file")
say("evaluate on hostile input: deep graphs, bad blocks, a blank response, an empty context, huge ratings and a 1.5 MB text: named, cached cleanly, one run per folder")
# evaluate --encoder all-MiniLM-L6-v2, one flag away from the default: every family that encodes
# on MiniLM, its shipped checkpoints chosen (models/bert-ruber, models/slm), agreeing with
# people; and the MPNet checkpoints given by name are refused before anything is encoded
with tempfile.TemporaryDirectory() as tmp:
    done = subprocess.run([str(examples / "evaluate"), "--encoder", str(minilm), "--skip", "llm", "--out", tmp], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: evaluate --encoder minilm: {done.stderr[-2000:]}")
    for family, folder in (("bert_ruber", "bert-ruber"), ("slm", "slm")):
        if f"evaluate: {family}: shipped checkpoint models/{folder}" not in done.stderr:
            sys.exit(f"FAILED: evaluate --encoder minilm did not choose the shipped MiniLM {family} checkpoint: {done.stderr[-2000:]}")
    rows = json.loads((Path(tmp) / "correlations.json").read_text())["turn_level"]["rows"]
    overall = {r["metric"]: r for r in rows if r["criterion"] == "Overall" and r["kind"] == "spearman"}
    for metric in ("BERTScore-F1", "Context-Cosine", "BERT-RUBER-unref", "SLM", "Combined"):
        if metric not in overall or not (overall[metric]["statistic"] > 0.1 and overall[metric]["pvalue"] < 0.05):
            sys.exit(f"FAILED: MiniLM's {metric} vs Overall: {overall.get(metric)}")
    refused = subprocess.run([str(examples / "evaluate"), "--encoder", str(minilm), "--ruber", "models/all-mpnet-base-v2/bert-ruber", "--slm", "models/all-mpnet-base-v2/slm",
                              "--skip", "llm,lexical,smatch,embedding,context_cosine", "--out", f"{tmp}/refused"], cwd=root, capture_output=True, text=True)
    if refused.returncode != 0:
        sys.exit(f"FAILED: evaluate --encoder minilm with MPNet checkpoints: {refused.stderr[-2000:]}")
    for family in ("bert_ruber", "slm"):
        if not re.search(rf"evaluate: {family}: skipped \(.*trained on the vectors of encoder \w+ \(768 dims\).*384 dims", refused.stderr):
            sys.exit(f"FAILED: evaluate --encoder minilm did not refuse the {family} checkpoint: {refused.stderr[-2000:]}")
summary = ", ".join(f"{m} {overall[m]['statistic']:.3f}" for m in ("BERTScore-F1", "BERT-RUBER-unref", "SLM"))
say(f"evaluate --encoder all-MiniLM-L6-v2: the shipped MiniLM checkpoints, Spearman with Overall {summary}; MPNet checkpoints refused by name")
# evaluate on a user's JSONL corpus with graphs from an external parser (a script playing one)
with tempfile.TemporaryDirectory() as tmp:
    fake = root / "amr-parse/tests/fixtures/fake_parser.py"
    cmd = [str(examples / "evaluate"), "--corpus", "jsonl", "--input", str(root / "datasets/tests/fixtures/user.jsonl"), "--amr-parser", f"command:python3 {fake}",
           "--skip", "llm,bert_ruber,slm,embedding", "--encoder", str(minilm), "--out", tmp]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if done.returncode != 0 or "AMR for 5 of 5 utterances" not in done.stderr or "# ::parser command" not in "".join(f.read_text() for f in (Path(tmp) / "amr").glob("parsed-command-*.amr.txt")):
        sys.exit(f"FAILED: evaluate --amr-parser command: {done.stderr}")
    again = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if "sentences: 0" not in again.stderr or "smatch: cached" not in again.stderr:
        sys.exit(f"FAILED: evaluate --amr-parser did not reuse its graphs: {again.stderr}")
say("evaluate --amr-parser command: every utterance parsed once, graphs reused on the next run")
# evaluate on GRADE's release layout: IDs run on across cells, each item on its cell's line
with tempfile.TemporaryDirectory() as tmp:
    cmd = [str(examples / "evaluate"), "--corpus", "grade", "--input", str(root / "datasets/tests/fixtures/grade/evaluation"), "--subset", "convai2",
           "--skip", "llm,bert_ruber,slm,embedding,smatch", "--encoder", str(minilm), "--out", tmp]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: evaluate --corpus grade: {done.stderr}")
    lines = [json.loads(line) for line in (Path(tmp) / "scores.jsonl").read_text().splitlines()]
    got = [(line["id"], line["response"], line["human"].get("Coherence")) for line in lines]
    want = [("grade-convai2-bert_ranker-0", "I love fresh bread .", 41 / 9), ("grade-convai2-bert_ranker-1", "I like the weather .", 16 / 11),
            ("grade-convai2-toy_model-0", "Where do you hike ?", 46 / 11), ("grade-convai2-toy_model-1", "Rex is a nice name .", 4.0)]
    if len(got) != len(want) or any(g[:2] != w[:2] or g[2] is None or abs(g[2] - w[2]) > 1e-9 for g, w in zip(got, want)):
        sys.exit(f"FAILED: evaluate --corpus grade joined {got}")
say("evaluate --corpus grade: the release layout (IDs across cells) joined line by line")
# multi-reference sanity check: DailyDialog++ positives as references for each other, on the
# first 40 of the 200 contexts with silver AMR (all 200 take two minutes here)
with tempfile.TemporaryDirectory() as tmp:
    ids = json.loads((root / "data/silver-amr/dailydialog-plusplus-dev200.context-ids.json").read_text())[:40]
    (Path(tmp) / "ids.json").write_text(json.dumps(ids))
    done = subprocess.run([str(examples / "multiref_ddpp"), "--contexts", f"{tmp}/ids.json", "--out", tmp], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: multiref_ddpp: {done.stderr}")
    rows = {r["metric"]: r for r in json.loads((Path(tmp) / "multiref.json").read_text())}
    referenced = ["BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1", "Embedding-Average", "Greedy-Matching", "Vector-Extrema", "BERT-RUBER-ref", "Smatch"]
    for name in referenced + ["BERT-RUBER-unref"]:
        r = rows.get(name)
        if r is None or (r["several"]["positives"], r["several"]["negatives"]) != (200, 200) or not 0 <= r["several"]["auc"] <= 1:
            sys.exit(f"FAILED: multiref_ddpp row {name}: {r}")
    # The unreferenced score ignores references: the same AUC with one and with four.
    if rows["BERT-RUBER-unref"]["one"]["auc"] != rows["BERT-RUBER-unref"]["several"]["auc"]:
        sys.exit("FAILED: multiref_ddpp: references changed BERT-RUBER-unref")
    # With four references every referenced metric must change (one reference only would not).
    same = [n for n in referenced if rows[n]["one"]["auc"] == rows[n]["several"]["auc"]]
    if same:
        sys.exit(f"FAILED: multiref_ddpp: {same} ignore the extra references")
say("multiref_ddpp: " + ", ".join(f"{n} {rows[n]['one']['auc']:.3f}->{rows[n]['several']['auc']:.3f}" for n in ("BERTScore-F1", "BERT-RUBER-ref", "Smatch")))
bad = subprocess.run([str(examples / "evaluate"), "--skip", "lexcal"], cwd=root, capture_output=True, text=True)
if bad.returncode == 0 or "invalid value 'lexcal'" not in bad.stderr:
    sys.exit(f"FAILED: evaluate accepted an unknown --skip name: {bad.stderr}")
bad = subprocess.run([str(examples / "evaluate"), "--skp", "llm"], cwd=root, capture_output=True, text=True)
if bad.returncode == 0 or "unexpected argument '--skp'" not in bad.stderr:
    sys.exit(f"FAILED: evaluate accepted an unknown flag: {bad.stderr}")
say(f"evaluate: shipped checkpoints, killed and restarted from the caches, {len(metrics)} metrics reported")
say(f"examples: {checked} AMR files and {len(pairs)} Smatch runs checked")
