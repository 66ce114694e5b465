#!/usr/bin/env bash
# Fetches Swagger UI (npm's swagger-ui-dist) for the REST API's /docs page and writes what the package
# ships into routes/ui/swagger: the two minified files the page loads, gzip-compressed (served as they
# are to a browser that accepts gzip, which every browser does), their licence and notices, and
# provenance.json (version, the tarball's integrity, the sha256 of each file). The page then loads
# nothing from outside: no CDN, so it renders on a closed network (issue 42).
#
#   bash scripts/vendor_swagger_ui.sh            # the pinned version, again (the same bytes)
#   bash scripts/vendor_swagger_ui.sh 5.36.0     # update: then run tests/routes/test_api_docs*.py
#
# Needs npm (the registry, through npm's own configuration) and gzip. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-5.35.0}
target=routes/ui/swagger
shipped=(swagger-ui-bundle.js swagger-ui.css)
notices=(LICENSE NOTICE swagger-ui-bundle.js.LICENSE.txt)
work=$(mktemp -d "${TMPDIR:-/tmp}/swagger-ui-XXXXXX")
trap 'rm -rf "$work"' EXIT

# npm pack checks the tarball against the registry's integrity before it writes it
npm pack --silent --pack-destination "$work" "swagger-ui-dist@$version" >/dev/null
tarball=$(ls "$work"/swagger-ui-dist-*.tgz)
integrity=$(npm view "swagger-ui-dist@$version" dist.integrity)
tar -xzf "$tarball" -C "$work"
[ "$(node -p "require('$work/package/package.json').version")" = "$version" ] \
  || { echo "vendor_swagger_ui: the tarball is not version $version" >&2; exit 1; }

rm -f "$target"/*.gz
for name in "${shipped[@]}"; do
  gzip -9 -n -c "$work/package/$name" >"$target/$name.gz"  # -n: no name or time, so the same bytes again
done
for name in "${notices[@]}"; do
  cp "$work/package/$name" "$target/$name"
done

sha() { sha256sum "$1" | cut -d' ' -f1; }
{
  echo "{"
  echo "  \"package\": \"swagger-ui-dist\","
  echo "  \"version\": \"$version\","
  echo "  \"license\": \"Apache-2.0\","
  echo "  \"source\": \"npm registry, swagger-ui-dist@$version\","
  echo "  \"integrity\": \"$integrity\","
  echo "  \"tarball_sha256\": \"$(sha "$tarball")\","
  echo "  \"made_by\": \"bash scripts/vendor_swagger_ui.sh $version\","
  echo "  \"files\": {"
  for name in "${shipped[@]}"; do
    echo "    \"$name.gz\": {\"from\": \"package/$name\", \"sha256_of_from\": \"$(sha "$work/package/$name")\", \"sha256\": \"$(sha "$target/$name.gz")\"},"
  done
  last=${notices[-1]}
  for name in "${notices[@]}"; do
    comma=","; [ "$name" = "$last" ] && comma=""
    echo "    \"$name\": {\"from\": \"package/$name\", \"sha256\": \"$(sha "$target/$name")\"}$comma"
  done
  echo "  }"
  echo "}"
} >"$target/provenance.json"
python3 -m json.tool "$target/provenance.json" >/dev/null
du -b "$target"/* | sed 's/^/vendor_swagger_ui: /'
