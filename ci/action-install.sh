#!/usr/bin/env bash
# The "Install perfgate" step of ci/action.yml: the perfgate binary, and the
# packages the chosen backend runs, nothing else (never the test tools).
#
# 1. The binary: the release tarball of the action's own tag
#    (perfgate-VERSION-linux-ARCH.tar.gz from the repository's GitHub
#    release), checked against its .sha256 (one line naming that tarball;
#    its hash compared with the tarball's) and unpacked under RUNNER_TEMP.
#    When the action is not used at a version tag (a branch, a commit, a
#    local `uses: ./ci`), when that release has no tarball for this
#    architecture, or with IN_BUILD_FROM_SOURCE=true, the step says so and
#    the action builds from its source instead (build dependencies only; the
#    build is cached by the next steps).
# 2. The backend's packages, only when missing:
#      perf       perf: Debian linux-perf; Ubuntu linux-tools-$(uname -r),
#                 else linux-tools-azure (Azure kernels, GitHub's runners) or
#                 linux-tools-generic, whichever apt knows
#      callgrind, memcheck  valgrind
#      native, rusage  nothing
#    Each name is checked with apt-cache first: one unknown name would fail
#    the whole apt-get install.
#
# Inputs (environment): IN_BACKEND, IN_BUILD_FROM_SOURCE, ACTION_REF
# (github.action_ref), ACTION_REPOSITORY (github.action_repository),
# GITHUB_SERVER_URL, RUNNER_TEMP, GITHUB_OUTPUT. For tests and mirrors:
# PERFGATE_RELEASE_URL (the base the release files are downloaded from,
# default $GITHUB_SERVER_URL/$ACTION_REPOSITORY/releases/download/$ACTION_REF;
# file:// works) and PERFGATE_OS_RELEASE (default /etc/os-release).
# Outputs: perfgate (the binary's path, empty for a source build) and
# source-build (true or false).
set -euo pipefail

backend="${IN_BACKEND:-perf}"
temp="${RUNNER_TEMP:-/tmp}"
output="${GITHUB_OUTPUT:-/dev/null}"
started=$SECONDS

say() { echo "perfgate install: $*"; }
sudo_=""
if [ "$(id -u)" -ne 0 ]; then sudo_="sudo"; fi

# --- the distribution ------------------------------------------------------
os_release="${PERFGATE_OS_RELEASE:-/etc/os-release}"
distro="unknown"
if [ -r "$os_release" ]; then
  # shellcheck source=/dev/null
  distro=$(. "$os_release" && echo "${ID:-unknown}")
fi

# --- 1. the binary -----------------------------------------------------------
arch=$(uname -m)
ref="${ACTION_REF:-}"
version=""
if [[ "$ref" =~ ^v?([0-9]+\.[0-9]+\.[0-9]+)$ ]]; then version="${BASH_REMATCH[1]}"; fi
source_build=false
binary=""
if [ "${IN_BUILD_FROM_SOURCE:-false}" = "true" ]; then
  say "build-from-source: true, building from the action's source"
  source_build=true
elif [ -z "$version" ]; then
  say "the action is used at '${ref:-a local path}', not at a release tag (vX.Y.Z): building from its source"
  source_build=true
else
  base="${PERFGATE_RELEASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/${ACTION_REPOSITORY:-}/releases/download/$ref}"
  name="perfgate-$version-linux-$arch"
  dir="$temp/perfgate-release"
  rm -rf "$dir"
  mkdir -p "$dir"
  if curl -fsSL --retry 3 -o "$dir/$name.tar.gz" "$base/$name.tar.gz" &&
     curl -fsSL --retry 3 -o "$dir/$name.tar.gz.sha256" "$base/$name.tar.gz.sha256"; then
    # A checksum that does not match is an error, never a fallback. The
    # .sha256 file must be one line "HEX  NAME" naming this tarball, and HEX
    # is compared with the tarball's own hash: `sha256sum -c` alone checks
    # whatever file the line names (a line naming /dev/null passes).
    sums="$dir/$name.tar.gz.sha256"
    read -r expected listed rest < "$sums" || true
    listed="${listed#\*}" # "HEX *NAME": sha256sum's binary mode, the same hash
    if [ "$(grep -c "" "$sums")" -ne 1 ] || [ -n "${rest:-}" ] || [ "$listed" != "$name.tar.gz" ] ||
       ! [[ "$expected" =~ ^[0-9a-f]{64}$ ]]; then
      echo "perfgate install: $name.tar.gz.sha256 (from $base) is not one line 'SHA256  $name.tar.gz': refusing the tarball" >&2
      exit 1
    fi
    actual=$(sha256sum < "$dir/$name.tar.gz" | cut -d' ' -f1)
    if [ "$actual" != "$expected" ]; then
      echo "perfgate install: $name.tar.gz does not match $name.tar.gz.sha256 (from $base): refusing it" >&2
      exit 1
    fi
    tar -xzf "$dir/$name.tar.gz" -C "$dir"
    binary="$dir/$name/bin/perfgate"
    "$binary" --version > /dev/null
    say "$("$binary" --version) from $base"
  else
    say "no $name.tar.gz at $base: building from the action's source"
    source_build=true
  fi
fi

# --- 2. packages ---------------------------------------------------------------
installed() { dpkg-query -W -f='${Status}' "$1" 2> /dev/null | grep -q "install ok installed"; }
known() { apt-cache show "$1" > /dev/null 2>&1; }

wanted=()
case "$backend" in
  perf)
    if command -v perf > /dev/null && perf --version > /dev/null 2>&1; then
      say "perf is already installed: $(perf --version)"
    elif [ "$distro" = "ubuntu" ]; then
      kernel=$(uname -r)
      candidates=("linux-tools-$kernel")
      if [[ "$kernel" == *azure* ]]; then candidates+=(linux-tools-azure); fi
      candidates+=(linux-tools-generic)
      picked=""
      for c in "${candidates[@]}"; do
        if installed "$c" || known "$c"; then picked=$c; break; fi
      done
      if [ -z "$picked" ]; then
        # apt's lists may be empty on a fresh runner: read them once, then retry.
        $sudo_ apt-get update -qq
        for c in "${candidates[@]}"; do
          if known "$c"; then picked=$c; break; fi
        done
      fi
      if [ -z "$picked" ]; then
        echo "perfgate install: none of ${candidates[*]} is known to apt: install perf yourself, or use backend callgrind, native or rusage" >&2
        exit 1
      fi
      wanted+=("$picked")
    else
      wanted+=(linux-perf)
    fi
    ;;
  callgrind | memcheck) wanted+=(valgrind) ;;
  native | rusage) ;;
  *)
    echo "perfgate install: unknown backend '$backend' (perf, native, callgrind, rusage or memcheck)" >&2
    exit 1
    ;;
esac

missing=()
for p in "${wanted[@]}"; do installed "$p" || missing+=("$p"); done
if [ "$source_build" = true ]; then
  # The build dependencies of the perfgate binary only (install-deps.sh build).
  "$(dirname "$0")/install-deps.sh" build
fi
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_ apt-get update -qq
  $sudo_ apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  say "no package to install for backend $backend"
fi

echo "perfgate=$binary" >> "$output"
echo "source-build=$source_build" >> "$output"
say "done in $((SECONDS - started)) s"
