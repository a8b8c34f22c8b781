#!/usr/bin/env bash
# Submits the main job to Slurm as an array of SHARDS shard tasks and a merge that runs when all
# of them succeeded; prints the two job ids.
#
#   INPUT=items.jsonl OUT=/shared/runs/eval SHARDS=16 EXTRA="--skip llm" scripts/slurm/submit.sh
set -euo pipefail
: "${INPUT:?}" "${OUT:?}" "${SHARDS:?}"
here="$(cd "$(dirname "$0")" && pwd)"
array=$(sbatch --parsable --export=ALL --array=1-"$SHARDS" "$here/evaluate_shard.sbatch")
merge=$(sbatch --parsable --export=ALL --dependency=afterok:"${array%%;*}" "$here/merge.sbatch")
echo "shards: job $array; merge: job $merge (writes $OUT/merged)"
