#!/usr/bin/env bash
# flex against wgpu, side by side, on a machine with a GPU (or any Vulkan adapter): MiniLM
# sentences/s, one SLM training step, SLM scoring throughput, one BERT-RUBER epoch.
#
#   scripts/gpu_bench.sh [extra gpu_bench flags, e.g. --devices cpu,wgpu:1 --pairs 1024]
#
# Needs all-MiniLM-L6-v2 (scripts/fetch_minilm.sh) and a Vulkan, Metal or DX12 driver; the
# release build with the wgpu feature takes about 30 minutes on 2 cores the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d "${DIALEVAL_MINILM:-$HOME/.cache/dialeval/models/all-MiniLM-L6-v2}" ] || scripts/fetch_minilm.sh
cargo run --release --features dialeval-examples/wgpu --example gpu_bench -- --devices cpu,wgpu "$@"
