#!/usr/bin/env bash
# Measures `.ci/run` from a cold start, as on a new machine: a clean clone of a commit beside
# this repository (so ../shared is beside it too), an empty target directory, empty caches
# (cargo registry, MiniLM, the LLM server's venv, pip), CI=true. Prints the time of every stage
# and the total; keeps the log and cargo's per-crate timing reports.
#
#   scripts/ci_cold.sh [REF]        # default HEAD; budget: 45 minutes on 2 cores
#
# Everything goes to ../dialeval-ci-cold* and is deleted at the next run. System packages that
# are already installed (wordnet-base, mesa-vulkan-drivers) stay installed: apt takes about a
# minute for them on a new machine. Run it with nothing else running on the machine, and never
# while cargo builds in the same target directory.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
parent="$(dirname "$repo")"
ref="$(git -C "$repo" rev-parse "${1:-HEAD}")"
clone="$parent/dialeval-ci-cold"
scratch="$parent/dialeval-ci-cold-scratch"
log="$parent/dialeval-ci-cold.log"

rm -rf "$clone" "$scratch"
mkdir -p "$scratch"/{target,cargo-home,cache}
git clone -q --no-local "$repo" "$clone"
git -C "$clone" checkout -q --detach "$ref"
# A new machine's cargo home has the toolchain's proxies (on PATH) but no registry cache.
[ -f "${CARGO_HOME:-$HOME/.cargo}/config.toml" ] && cp "${CARGO_HOME:-$HOME/.cargo}/config.toml" "$scratch/cargo-home/"

echo "ci_cold: .ci/run at $ref in $clone (log: $log)"
start=$SECONDS
set +e
(
  cd "$clone"
  env CI=true DIALEVAL_CI_TIMINGS=1 \
    CARGO_TARGET_DIR="$scratch/target" CARGO_HOME="$scratch/cargo-home" \
    DIALEVAL_CACHE="$scratch/cache" DIALEVAL_MINILM="$scratch/cache/minilm" DIALEVAL_MPNET="$scratch/cache/mpnet" \
    PIP_NO_CACHE_DIR=1 \
    bash .ci/run
) >"$log" 2>&1
rc=$?
set -e
wall=$((SECONDS - start))
mkdir -p "$parent/dialeval-ci-cold-timings"
cp "$scratch"/target/cargo-timings/cargo-timing-*.html "$parent/dialeval-ci-cold-timings/" 2>/dev/null || true

sed -n '/^== stage times/,$p' "$log"
awk -v s="$wall" 'BEGIN { printf "ci_cold: wall %.1f min, exit %d\n", s / 60, '"$rc"' }'
echo "ci_cold: cargo timing reports in $parent/dialeval-ci-cold-timings/"
if [ "$rc" -ne 0 ]; then
  echo "ci_cold: .ci/run failed; the log's tail:" >&2
  tail -40 "$log" >&2
fi
exit "$rc"
