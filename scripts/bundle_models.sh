#!/usr/bin/env bash
# Copies the files a scorer reads from finished training runs into models/ and writes each
# checkpoint's SHA256SUMS (checked by the loaders before a model is used).
#
#   scripts/bundle_models.sh SLM_RUN RUBER_RUN [DEST]
#
# SLM_RUN is a `train_slm` output directory, RUBER_RUN a `bert_ruber train` one (`-` keeps the
# shipped one); DEST is models/ (the default: checkpoints on all-MiniLM-L6-v2's vectors) or a
# folder of it for another encoder's (models/all-mpnet-base-v2: the main job picks the shipped
# checkpoint trained on the encoder it runs). models/README.md says which commands made them.
set -euo pipefail
cd "$(dirname "$0")/.."
slm="${1:?usage: scripts/bundle_models.sh SLM_RUN RUBER_RUN}"
ruber="${2:?usage: scripts/bundle_models.sh SLM_RUN RUBER_RUN}"
dest="${3:-models}"

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

[ "$slm" = - ] || copy "$dest/slm" "$slm" featurizer.json train.json best/mode.json best/model.bpk log.jsonl test.json
[ "$ruber" = - ] || copy "$dest/bert-ruber" "$ruber" ruber.json best/model.bpk log.jsonl test.json
