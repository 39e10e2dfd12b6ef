#!/usr/bin/env bash
# Fails, naming the files, when a tracked C++ file is not as clang-format
# leaves it (.clang-format: Google style). The version is pinned to
# Debian bookworm's clang-format 14, since other versions format some
# constructs differently; `make format` rewrites the files in place.
set -euo pipefail
cd "$(dirname "$0")/.."
format=clang-format
if command -v clang-format-14 >/dev/null; then format=clang-format-14; fi
version=$("$format" --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$version" != 14 ]; then
  echo "check-format: needs clang-format 14 (Debian bookworm's package" \
       "clang-format), found '${version:-none}'" >&2
  exit 2
fi
bad=$(git ls-files '*.cc' '*.h' | xargs "$format" --dry-run 2>&1 |
      sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' |
      sort -u)
if [ -n "$bad" ]; then
  echo "check-format: not clang-formatted (run make format):" >&2
  echo "$bad" | sed 's/^/  /' >&2
  exit 1
fi
