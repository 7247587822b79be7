#!/usr/bin/env bash
# Installs the OpenAPI validator that the ctest openapi_valid runs
# (@apidevtools/swagger-parser, the version pinned in package-lock.json,
# integrity-checked by npm ci) into DIR, unless DIR already holds exactly
# that lock's install: the first run needs the npm registry, later runs
# are offline. Needs node and npm (ci/install-deps.sh installs them).
#
# Usage: tests/openapi/install_validator.sh DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: install_validator.sh DIR}
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "install_validator: $tool not found: run ci/install-deps.sh test" >&2; exit 1; }
done
mkdir -p "$dir"
if [ -f "$dir/node_modules/.perfgate-lock" ] && cmp -s "$here/package-lock.json" "$dir/node_modules/.perfgate-lock"; then
  echo "install_validator: $dir is up to date"
  exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dir/"
cd "$dir"
if ! npm ci --no-audit --no-fund --ignore-scripts --loglevel=error; then
  echo "install_validator: npm ci failed in $dir (the first install needs the npm registry)" >&2
  exit 1
fi
cp "$here/package-lock.json" node_modules/.perfgate-lock
echo "install_validator: installed $(node -p 'require("@apidevtools/swagger-parser/package.json").version' 2>/dev/null || echo '?') in $dir"
