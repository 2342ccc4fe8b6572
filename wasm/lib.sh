# The steps build.sh and build-avif.sh share; each sources this first. It sets `here` to wasm/ and works
# from there (the scripts' paths are relative to it).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# require_emcc NAME: stops the build with an install hint when emscripten is missing. Debian's emcc runs
# under the system Node and finds its modules only in /usr/share/nodejs, whatever Node is first on PATH.
require_emcc() {
  if ! command -v emcc >/dev/null; then
    echo "$1: emcc not found; install Debian's emscripten: apt-get install -y emscripten cmake" >&2
    exit 1
  fi
  export NODE_PATH=/usr/share/nodejs
}

# check_sha256 DIGEST TARBALL: stops the build when a vendored tarball is not the one recorded.
check_sha256() { echo "$1  $2" | sha256sum -c --quiet -; }

# compile_each CFLAGS SRC_DIR OUT_DIR LIBRARY: compiles every file OUT_DIR/sources lists (paths below
# SRC_DIR) on every core, then archives the objects in name order, so two builds are byte-identical.
compile_each() {
  SR_CFLAGS="$1" SR_FROM="$2" SR_TO="$3"
  export SR_CFLAGS SR_FROM SR_TO
  xargs -P "$(nproc)" -I{} sh -c 'emcc $SR_CFLAGS -c "$SR_FROM/$1" -o "$SR_TO/$(echo "$1" | tr / _).o"' _ {} <"$SR_TO/sources"
  (cd "$SR_TO" && LC_ALL=C ls *.o | xargs emar rcsD "$4")
}

# report FILE...: each built file's size, gzipped size and digest, to compare two builds by.
report() {
  for f in "$@"; do
    printf '%-22s %8d bytes  %8d gzip  sha256 %s\n' "$f" "$(stat -c %s "$f")" "$(gzip -9n <"$f" | wc -c)" "$(sha256sum "$f" | cut -c1-16)"
  done
}
