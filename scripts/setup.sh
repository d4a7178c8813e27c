#!/usr/bin/env bash
# One-command setup from a clone: bubblewrap and git if missing, a build of claudebox installed as
# a copy (moving or deleting the clone later does not break it), then claudebox --check.
# Root installs into /usr/local, anyone else into ~/.local (no root needed). The real Claude Code
# that only the tests use is not downloaded: install Claude Code the way you like.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bwrap >/dev/null || ! command -v git >/dev/null; then
  sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq bubblewrap git >/dev/null
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  echo "setup: claudebox needs Node.js 20 or newer; this is $(node --version)" >&2
  exit 1
fi

npm ci --no-audit --no-fund --loglevel=error   # the build tools, about 100 MB
tarball=$(npm pack --silent)                   # builds dist/
if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix=$HOME/.local; fi
npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error "./$tarball"
rm -f "$tarball"
echo "setup: installed $prefix/bin/claudebox"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "setup: $prefix/bin is not on your PATH; add it: echo 'export PATH=\"$prefix/bin:\$PATH\"' >> ~/.profile (then log in again)" ;;
esac
exec "$prefix/bin/claudebox" --check
