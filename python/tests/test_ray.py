"""``dialeval.ray.evaluate`` on a real Ray cluster on this machine: a head node and a second node
joined to it (two raylets on the loopback address, two machines as far as Ray knows), the corpus
in shards, a worker killed in the middle of its task and a node stopped during a run; the merged
report equals a one-process ``dialeval.evaluate`` byte for byte but the seconds. The cluster is
stopped when the tests end, pass or fail."""

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import dialeval
from conftest import ROOT
from test_evaluate import ddpp_items, encoder_or_skip

# Ray 2.5x's ``ray start --head`` turns token authentication on by itself, but a joining node
# and a driver only send a token when ``RAY_AUTH_MODE=token`` says so: left implicit, the second
# node is refused ("Failed to connect to GCS ... InvalidAuthToken"). The test cluster gets a fresh
# token of its own (not ~/.ray/auth_token, which another cluster may own), through the
# environment that every node started here inherits; set before ``import ray``, which reads it
# once for this driver.
os.environ["RAY_AUTH_MODE"] = "token"
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)

try:
    import ray  # noqa: F401  (the extra is installed)

    import dialeval.ray
except ImportError:
    if os.environ.get("DIALEVAL_REQUIRE_RAY") == "1":
        raise
    pytest.skip("ray is not installed (pip install 'dialeval[ray]')", allow_module_level=True)

# The report's files that must equal a one-process run's (report.md but for its seconds).
FILES = ("scores.jsonl", "scores.csv", "correlations.json", "correlations.md")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_cli(*args, check=True):
    ray_bin = Path(sys.executable).with_name("ray")
    return subprocess.run([str(ray_bin), *args], capture_output=True, text=True, check=check, timeout=180)


def start_node(args):
    """``ray start`` with the flags ``args()`` gives, tried three times (a port just freed may be taken again, a head just
    started may not take joins yet); the last failure names what Ray said."""
    for attempt in range(3):
        done = ray_cli("start", *args(), check=False)
        if done.returncode == 0:
            return
        time.sleep(2 + 3 * attempt)
    raise RuntimeError(f"ray start failed: {done.stdout[-2000:]}\n{done.stderr[-2000:]}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head node and a second node on 127.0.0.1, one CPU each, with this module's token
    (above); stopped at the end."""
    port = free_port()
    ports = {}

    def second():
        ports["second"] = free_port()
        return (f"--address=127.0.0.1:{port}", "--node-ip-address=127.0.0.1", "--num-cpus=1", f"--node-manager-port={ports['second']}", "--disable-usage-stats")

    try:
        start_node(lambda: ("--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=1", "--disable-usage-stats", "--include-dashboard=false"))
        start_node(second)
        yield {"address": f"127.0.0.1:{port}", "second_node_port": ports["second"]}
    finally:
        try:
            import ray as ray_module

            ray_module.shutdown()
        finally:
            ray_cli("stop", "--force", check=False)


def one_process(items, out, **settings):
    return dialeval.evaluate(items, out=out, **settings)


def families_table_without(text, resumed):
    """report.md with the families table's seconds blanked, and with ``resumed`` its status
    column too (a resumed run says how many chunks came from the cache)."""
    rows = []
    for line in text.splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) == 4 and cells[2].replace(".", "", 1).isdigit():
            cells[2] = "-"
            if resumed:
                cells[1] = "-"
        rows.append(" | ".join(cells))
    return "\n".join(rows)


def same_report(a: Path, b: Path, resumed=False):
    for f in FILES:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert families_table_without((a / "report.md").read_text(), resumed) == families_table_without((b / "report.md").read_text(), resumed)


def settings_of():
    return dict(skip=("llm",), models=str(ROOT / "models"), encoder=str(encoder_or_skip()), bootstrap=200, chunk=64)


def test_the_ray_path_gives_the_one_machine_report(cluster, tmp_path, capfd):
    items = ddpp_items(400)
    settings = settings_of()
    one_process(items, tmp_path / "one", **settings)
    capfd.readouterr()
    report = dialeval.ray.evaluate(items, shards=4, out=tmp_path / "ray", address=cluster["address"], work_dir=str(tmp_path / "work"), **settings)
    assert len(report.scores) == 400
    # Progress (stderr is no terminal here): a line per finished shard, with the count and time.
    lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("dialeval.ray: shard ")]
    assert [line.split(", ")[1] for line in lines] == [f"{n} of 4" for n in range(1, 5)], lines
    same_report(tmp_path / "one", tmp_path / "ray")
    assert sorted(p.name for p in (tmp_path / "ray/shards").iterdir()) == ["1-of-4", "2-of-4", "3-of-4", "4-of-4"]
    # Called again on the same corpus and settings: the kept shards are not scored again.
    again = dialeval.ray.evaluate(items, shards=4, out=tmp_path / "ray", address=cluster["address"], work_dir=str(tmp_path / "work"), **settings)
    assert again.scores == report.scores


def test_the_bundled_corpus_on_ray_is_the_one_machine_report(cluster, tmp_path):
    """The main job's default corpus (USR-PersonaChat, a USR file, with its silver AMR) in
    shards on the cluster: the report of one process, every family but the LLM judge."""
    usr = ROOT / "data/usr-personachat/pc_usr_data.json"
    settings = dict(settings_of(), format="usr", amr=[str(ROOT / "data/silver-amr/usr-personachat.silver.amr.txt")])
    one = one_process(usr, tmp_path / "one", **settings)
    report = dialeval.ray.evaluate(usr, shards=3, out=tmp_path / "ray", address=cluster["address"], work_dir=str(tmp_path / "work"), progress=False, **settings)
    assert len(report.scores) == 300 and report.scores == one.scores
    assert {"SLM", "BERT-RUBER-unref", "Smatch"} <= set(report.scores[0]["metrics"])
    same_report(tmp_path / "one", tmp_path / "ray")
    with pytest.raises(dialeval.InputError, match="item dicts are JSONL"):
        dialeval.ray.evaluate(ddpp_items(3), shards=2, out=tmp_path / "dicts", address=cluster["address"], format="usr")


def ray_run_during(fault, cluster, tmp_path, items, settings):
    """``dialeval.ray.evaluate`` of ``items`` while ``fault(stop)`` runs on a thread (until it
    returns or ``stop`` is set)."""
    stop = threading.Event()
    thread = threading.Thread(target=fault, args=(stop,))
    thread.start()
    try:
        dialeval.ray.evaluate(items, shards=4, out=tmp_path / "ray", address=cluster["address"], work_dir=str(tmp_path / "work"), progress=False, **settings)
    finally:
        stop.set()
        thread.join()


def when_a_shard_runs(stop, act):
    """Calls ``act()`` once a shard task runs (a process titled ``ray::_score_shard``)."""
    while not stop.is_set():
        if subprocess.run(["pgrep", "-f", "ray::_score_shard"], capture_output=True).returncode == 0:
            act()
            return
        time.sleep(0.05)


def test_a_worker_killed_mid_task_changes_nothing(cluster, tmp_path):
    items = ddpp_items(400)
    settings = settings_of()
    one_process(items, tmp_path / "one", **settings)
    killed = []

    def kill_the_worker():
        found = subprocess.run(["pgrep", "-f", "ray::_score_shard"], capture_output=True, text=True).stdout.split()
        if found:
            os.kill(int(found[0]), signal.SIGKILL)
            killed.append(int(found[0]))

    ray_run_during(lambda stop: when_a_shard_runs(stop, kill_the_worker), cluster, tmp_path, items, settings)
    assert killed, "a shard task was running and was killed"
    same_report(tmp_path / "one", tmp_path / "ray", resumed=True)


def test_a_shard_with_a_bad_item_is_an_empty_cell_not_a_retry(cluster, tmp_path):
    items = ddpp_items(40)
    items[5] = dict(items[5], response="")
    settings = dict(skip=("llm", "embedding", "context_cosine", "bert_ruber", "slm", "fine_tuned"), bootstrap=0)
    one = one_process(items, tmp_path / "one", **settings)
    report = dialeval.ray.evaluate(items, shards=4, out=tmp_path / "ray", address=cluster["address"], work_dir=str(tmp_path / "work"), max_retries=0, progress=False, **settings)
    assert report.scores[5]["metrics"]["BLEU-4"] is None
    assert report.scores == one.scores
    same_report(tmp_path / "one", tmp_path / "ray")


def test_a_node_stopped_mid_run_changes_nothing(cluster, tmp_path):
    """Runs last: the second node is gone afterwards."""
    items = ddpp_items(400)
    settings = settings_of()
    one_process(items, tmp_path / "one", **settings)
    stopped = []

    def stop_the_second_node():
        # Every process of the second node (its raylet, its workers' parent) is killed a second
        # after a shard task started: the node dies as a machine that loses power.
        time.sleep(1.0)
        stopped.append(subprocess.run(["pkill", "-9", "-f", f"node_manager_port={cluster['second_node_port']}"], capture_output=True).returncode)

    ray_run_during(lambda stop: when_a_shard_runs(stop, stop_the_second_node), cluster, tmp_path, items, settings)
    assert stopped == [0], "the second node's processes were found and killed"
    same_report(tmp_path / "one", tmp_path / "ray", resumed=True)
