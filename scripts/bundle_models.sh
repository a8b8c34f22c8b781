#!/usr/bin/env bash
# Copies the files a scorer reads from finished training runs into models/ and writes each
# checkpoint's SHA256SUMS (checked by the loaders before a model is used).
#
#   scripts/bundle_models.sh SLM_RUN RUBER_RUN
#
# SLM_RUN is a `train_slm` output directory, RUBER_RUN a `bert_ruber train` one (`-` keeps the
# shipped one); models/README.md says which commands made the shipped ones.
set -euo pipefail
cd "$(dirname "$0")/.."
slm="${1:?usage: scripts/bundle_models.sh SLM_RUN RUBER_RUN}"
ruber="${2:?usage: scripts/bundle_models.sh SLM_RUN RUBER_RUN}"

copy() { # copy DEST SRC_DIR FILE...
  local dest="$1" src="$2"; shift 2
  rm -rf "$dest"
  for f in "$@"; do
    [ -f "$src/$f" ] || { echo "bundle_models: $src/$f is missing" >&2; exit 1; }
    mkdir -p "$dest/$(dirname "$f")"
    cp "$src/$f" "$dest/$f"
  done
  (cd "$dest" && sha256sum "$@" > SHA256SUMS)
  echo "$dest: $(du -sh "$dest" | cut -f1)"
}

[ "$slm" = - ] || copy models/slm "$slm" featurizer.json train.json best/mode.json best/model.bpk log.jsonl test.json
[ "$ruber" = - ] || copy models/bert-ruber "$ruber" ruber.json best/model.bpk log.jsonl test.json
