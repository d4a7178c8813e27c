#!/usr/bin/env bash
# Evaluates claudebox's flake.nix with nix against test/nix/nixpkgs-stub (nixpkgs itself cannot be
# downloaded here, so nothing is built) and checks its outputs (test/nix/assertions.nix). All of
# nix's state (a private store, HOME, caches) lives in a temporary directory, so it runs the same
# as root and as an unprivileged user and writes nothing elsewhere.
#
#   test/nix/check.sh        exit 0: all checks pass; 1: a check failed; 127: no nix
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
started=$(date +%s%N)

if ! command -v nix >/dev/null; then
  echo "check.sh: nix not found (Debian: apt-get install nix-bin)" >&2
  exit 127
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/claudebox-nix.XXXXXX")
# A nix store is read-only by design: make it writable again to remove it.
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# The flake as a user gets it (a checkout or a GitHub tarball), without what npm and git add: a
# path: flake copies every file to the store, and git+file would leave out files not yet added.
mkdir "$tmp/tree"
tar -C "$repo" --exclude=./node_modules --exclude=./dist --exclude=./.git --exclude=./coverage --exclude=./.cache \
  --exclude='./*.tgz' -cf - . | tar -C "$tmp/tree" -xf -
flake="path:$tmp/tree"
stub="path:$tmp/tree/test/nix/nixpkgs-stub"

export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config" \
  XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state"
unset NIX_PATH NIX_REMOTE
# No build users (root would otherwise want the nixbld group), no binary cache, and no
# import-from-derivation: evaluating the flake must not build or fetch anything.
export NIX_CONFIG="experimental-features = nix-command flakes
build-users-group =
substituters =
allow-import-from-derivation = false
warn-dirty = false"

nix_() {
  # --store: a private local store (/nix/store inside $tmp/store), writable by any user.
  command nix --store "$tmp/store" "$@" --no-write-lock-file --override-input nixpkgs "$stub"
}

failed=0
# nix's error, without the warning about the lock file it does not write.
nix_error() { sed -n '/^error/,$p' "$tmp/err" | head -n 30; }
fail() {
  echo "FAIL: $*" >&2
  failed=1
}

# 1. Nothing is fetched at evaluation time beyond the flake's inputs.
if fetches=$(grep -nE 'builtins\.(fetch|getFlake)|fetchTarball|fetchGit|fetchurl|fetchFromGitHub|fetchTree' \
  "$repo/flake.nix" "$repo"/nix/*.nix); then
  fail "the flake fetches at evaluation time:"$'\n'"$fetches"
fi
if [ -e "$repo/flake.lock" ]; then
  fail "flake.lock is committed; it would pin nixpkgs to whatever the stub or a local run resolved"
fi

# 2. nix's own view, in pure evaluation: every output evaluates and has the right shape.
if show=$(nix_ flake show --json "$flake" 2>"$tmp/err"); then
  for output in packages checks apps devShells overlays; do
    [[ $show == *"\"$output\":"* ]] || fail "flake show has no $output"
  done
else
  fail "nix flake show: $(nix_error)"
fi
nix_ flake check --no-build "$flake" 2>"$tmp/err" || fail "nix flake check --no-build: $(nix_error)"

# 3. The outputs, attribute by attribute (--impure only to import assertions.nix).
for output in packages checks apps devShells overlays; do
  if result=$(nix_ eval --json --impure "$flake#$output" \
    --apply "(import $here/assertions.nix { tree = $tmp/tree; }).$output" 2>"$tmp/err"); then
    if [ "$result" = "[]" ]; then
      echo "ok: $output"
    else
      fail "$output: $result"
    fi
  else
    fail "nix eval $output: $(nix_error)"
  fi
done

echo "check.sh: $(( ($(date +%s%N) - started) / 1000000 )) ms"
exit $failed
