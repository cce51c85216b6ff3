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
# Inputs with headers (see fuzz_targets/frontend.rs): include cycles,
# `#pragma once`, include guards, templates spread over files.
printf '#include "a.h"\nkernel void k(device float* o [[buffer(0)]]) { o[0] = f<float>(1.0f); }\n#--\n#pragma once\n#include "b.h"\ntemplate <class T> T f(T x) { return g(x); }\n#--\n#include "a.h"\n#include <c.h>\ninline float g(float x) { return x; }\n#--\n#ifndef C_H\n#define C_H\n#include "c.h"\ntemplate <template <class> class W, class T> struct Box { W<T> w; };\n#endif\n' > "$dest/headers_cycle.metal"
printf '#include "a.h"\n#--\n#include "a.h"\n' > "$dest/headers_self.metal"
n=$((n + 2))
# Real libraries, when a checkout is given (never committed): CORPUS_DIRS="dir1 dir2".
for d in ${CORPUS_DIRS:-}; do
  while IFS= read -r -d '' f; do
    copy "$f" "lib"
  done < <(find "$d" -name '*.metal' -size -200k -print0)
done
echo "seeded $n files into $dest"
