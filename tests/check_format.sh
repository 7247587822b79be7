#!/usr/bin/env bash
# ctest check_format: every C++ source git tracks matches .clang-format
# (cmake/format.cmake, MODE=check). The layout is clang-format 14's (Debian
# 12's, which ci/install-deps.sh installs); with another version, or none,
# the test is reported as skipped (exit 77), not passed.
# Usage: check_format.sh CLANG_FORMAT SOURCE_DIR
set -euo pipefail
clang_format=$1
source_dir=$2
if [ -z "$clang_format" ] || ! command -v "$clang_format" > /dev/null; then
  echo "check_format: skipped: clang-format not found (apt-get install clang-format)"
  exit 77
fi
version=$("$clang_format" --version)
case "$version" in
  *"version 14."*) ;;
  *) echo "check_format: skipped: the layout is clang-format 14's, this is: $version"
     exit 77 ;;
esac
exec cmake -DCLANG_FORMAT="$clang_format" -DSOURCE_DIR="$source_dir" -DMODE=check -P "$source_dir/cmake/format.cmake"
