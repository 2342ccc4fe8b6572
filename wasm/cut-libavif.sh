#!/usr/bin/env bash
# Cuts vendor/libavif-1.4.2-src.tar.gz from Debian's libavif_1.4.2.orig.tar.gz (sha256 checked: the
# digest in the source package libavif 1.4.2-1's .dsc). The orig tarball is 14.7 MB, mostly test images
# and tools; the cut keeps, unmodified, the files build-avif.sh compiles and the licences: the library's
# headers and sources (without the other codecs' glue: dav1d, libgav1, rav1e, SVT-AV1, AVM, and without
# the C++ compliance checker), the libyuv scaling subset libavif carries, LICENSE. The same input gives
# the same bytes (sorted names, the orig's mtimes, no owners, gzip -n), so anyone can check the vendored
# file: bash wasm/cut-libavif.sh path/to/libavif_1.4.2.orig.tar.gz && git diff --stat wasm/vendor
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
orig="$(realpath "$1")"
echo "2b645287340ba5a631d268b551dc2d72bd73ac33335962dd36dcdb6d8366921d  $orig" | sha256sum -c --quiet -
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$orig" -C "$tmp"
cd "$tmp"
find libavif-1.4.2/LICENSE libavif-1.4.2/include libavif-1.4.2/src libavif-1.4.2/third_party/README.md \
  libavif-1.4.2/third_party/libyuv -type f |
  grep -Ev '/src/(codec_(avm|dav1d|libgav1|rav1e|svt)\.c|compliance\.cc)$' | LC_ALL=C sort >list
tar --no-recursion --owner=0 --group=0 --numeric-owner --format=gnu -cf - -T list | gzip -9n >"$here/vendor/libavif-1.4.2-src.tar.gz"
wc -l <list | xargs printf '%s files, '
stat -c %s "$here/vendor/libavif-1.4.2-src.tar.gz" | xargs printf '%s bytes, sha256 '
sha256sum "$here/vendor/libavif-1.4.2-src.tar.gz" | cut -d' ' -f1
