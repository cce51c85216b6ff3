#!/usr/bin/env bash
# Fill fuzz/corpus/frontend with the project's Metal files as seeds.
# Usage: fuzz/seed.sh   (from anywhere; ../shared is optional)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dest="$here/corpus/frontend"
mkdir -p "$dest"
n=0
copy() {
  local f="$1" prefix="$2"
  cp "$f" "$dest/${prefix}_$(basename "$f")"
  n=$((n + 1))
}
while IFS= read -r -d '' f; do
  rel="${f#"$root"/crates/msl/tests/kernels/}"
  copy "$f" "$(dirname "$rel" | tr '/' '_')"
done < <(find "$root/crates/msl/tests/kernels" -name '*.metal' -print0)
shared="${SHARED_DIR:-$root/../shared}/conformance/cases"
if [ -d "$shared" ]; then
  while IFS= read -r -d '' f; do
    copy "$f" "conf_$(basename "$(dirname "$f")")"
  done < <(find "$shared" -mindepth 2 -maxdepth 2 -name '*.metal' -print0)
fi
echo "seeded $n files into $dest"
