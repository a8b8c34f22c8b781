#!/usr/bin/env bash
# Before a release: every library crate without burn in its graph, packaged (only its own files,
# with its workspace siblings from a local overlay registry), builds on its own. About a minute
# warm and 1.2 minutes cold on 2 cores, so CI (.ci/run) only packages the crates
# (`--no-verify`: manifest metadata, licence, versions on path dependencies) and leaves the
# verifying build to this script. The four crates with burn (slm-model, eval, the facade, the
# command) are left out: their verifying build would rebuild burn at opt-level 0 outside this
# workspace's profiles.
#
#   scripts/check_packages.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo package -q --workspace --allow-dirty --exclude dialeval-examples --exclude dialeval-benches --exclude dialeval-testkit --exclude dialeval-python \
  --exclude dialeval-slm-model --exclude dialeval-eval --exclude dialeval --exclude dialeval-cli
echo "check_packages: every crate without burn builds from its package alone"
