#!/usr/bin/env bash
# Refreshes the vendored front-end assets under web/static from the npm registry, at the pinned
# versions below, so that a fresh clone runs without npm. Change a version here, run this script,
# check the playground, and commit web/static.
#
#   bash web/scripts/vendor.sh
set -euo pipefail
cd "$(dirname "$0")/.."

GRAPHIQL=3.8.3 # the last GraphiQL with a UMD build (4 ships ES modules only)
REACT=18.3.1   # GraphiQL 3's peer; React 19 has no UMD build
AXE=4.10.3     # axe-core: a test fixture only (server/testdata/axe), never embedded or served

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "graphiql@$GRAPHIQL" "react@$REACT" "react-dom@$REACT" "axe-core@$AXE" >/dev/null)
for tgz in "graphiql-$GRAPHIQL" "react-$REACT" "react-dom-$REACT" "axe-core-$AXE"; do
  pkg=${tgz%-*}
  mkdir -p "$work/$pkg" && tar -xzf "$work/$tgz.tgz" -C "$work/$pkg" --strip-components 1
done

out=static/graphiql
rm -rf "$out" && mkdir -p "$out"
cp "$work/graphiql/graphiql.min.js" "$work/graphiql/graphiql.min.css" "$out/"
cp "$work/react/umd/react.production.min.js" "$work/react-dom/umd/react-dom.production.min.js" "$out/"
# The source maps are not vendored: drop the comments that would have the browser ask for them.
sed -i -E '/^(\/\/|\/\*)# sourceMappingURL=/d' "$out"/*.js "$out"/*.css
{
  echo "Vendored by web/scripts/vendor.sh from the npm registry:"
  echo "graphiql@$GRAPHIQL react@$REACT react-dom@$REACT"
  echo
  for pkg in graphiql react react-dom; do
    echo "== $pkg"
    cat "$work/$pkg/LICENSE"
    echo
  done
} > "$out/LICENSES.txt"
ls -l "$out"

# The browser tests' accessibility check runs axe-core in each page.
axe=../server/testdata/axe
rm -rf "$axe" && mkdir -p "$axe"
cp "$work/axe-core/axe.min.js" "$work/axe-core/LICENSE" "$axe/"
echo "axe-core@$AXE, vendored by web/scripts/vendor.sh from the npm registry" > "$axe/VERSION"
ls -l "$axe"
