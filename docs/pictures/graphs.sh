#!/usr/bin/env bash
# The pictures of every example's graph: runs each example at a small size
# with VYRE_DOT_DIR set (each writes its graphs' `to_dot()` there), keeps the
# DOT in docs/pictures/graphs/ and draws each as SVG with Graphviz.
#
#   docs/pictures/graphs.sh          # write the .dot files and draw the .svg
#   docs/pictures/graphs.sh --check  # only compare today's DOT with the committed (CI)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=docs/pictures/graphs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { VYRE_DOT_DIR="$tmp" cargo run -q --example "$@" >/dev/null; }
run quickstart 1000
run collatz 1000
run prefix_sum 1000
run stats 1000
run radix_sort 1000
run blur 64
run mlp 8
run particles 100
run image_pipeline 1024
run compact 1000
run bfs 1000
if [ "${1:-}" = "--check" ]; then
  status=0
  for f in "$tmp"/*.dot; do
    name=$(basename "$f")
    if ! cmp -s "$f" "$out/$name"; then
      echo "docs/pictures/graphs/$name differs from to_dot() today: run docs/pictures/graphs.sh" >&2
      diff "$out/$name" "$f" >&2 || true
      status=1
    fi
  done
  for f in "$out"/*.dot; do
    [ -e "$tmp/$(basename "$f")" ] || { echo "$f: no example writes it any more" >&2; status=1; }
  done
  exit $status
fi
mkdir -p "$out"
rm -f "$out"/*.dot "$out"/*.svg
cp "$tmp"/*.dot "$out"/
for f in "$out"/*.dot; do
  dot -Tsvg "$f" -o "${f%.dot}.svg"
done
ls "$out"
