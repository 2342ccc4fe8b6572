#!/usr/bin/env bash
# Rebuilds wasm/codec/sr_jpeg.{js,wasm} from the vendored upstream source and our C glue in wasm/src/.
# Needs Debian's emscripten (apt-get install -y emscripten cmake) and nothing from the network.
# The built files are committed, so installing and testing the service needs none of this.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

LJT_VERSION=2.1.5
LJT_TARBALL="vendor/libjpeg-turbo-${LJT_VERSION}.tar.gz"
# The upstream release tarball, as Debian's source package libjpeg-turbo 1:2.1.5-2 carries it
# (libjpeg-turbo_2.1.5.orig.tar.gz); the same digest is in that package's .dsc.
LJT_SHA256=254f3642b04e309fee775123133c6464181addc150499561020312ec61c1bf7c
# Fixed so that two builds of the same sources are byte-identical (libjpeg-turbo stamps a date otherwise).
BUILD_STAMP=20230208

if ! command -v emcc >/dev/null; then
  echo "build.sh: emcc not found; install Debian's emscripten: apt-get install -y emscripten cmake" >&2
  exit 1
fi
# Debian's emcc runs under the system Node and finds its modules only here, whatever Node is first on PATH.
export NODE_PATH=/usr/share/nodejs
emcc --version | head -n 1

echo "$LJT_SHA256  $LJT_TARBALL" | sha256sum -c --quiet -
work="$here/.build"
rm -rf "$work"
mkdir -p "$work/lib"
tar -xzf "$LJT_TARBALL" -C "$work"
src="$work/libjpeg-turbo-${LJT_VERSION}"
# Our changes to upstream, each a small patch with its reason inside.
for patch in patches/*.patch; do patch -s -d "$src" -p1 <"$patch"; done

# libjpeg-turbo as a static library: no SIMD (WebAssembly has none of its assembly), no TurboJPEG API.
# CMake's size checks fail under emscripten 3.1.6, so the answers for wasm32 are given.
(
  cd "$work/lib"
  emcmake cmake "$src" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O3 -msimd128" \
    -DENABLE_SHARED=0 -DENABLE_STATIC=1 -DWITH_SIMD=0 -DWITH_TURBOJPEG=0 -DWITH_JAVA=0 \
    -DBUILD="$BUILD_STAMP" -DSIZE_T=4 -DUNSIGNED_LONG=4 >cmake.log
  emmake make -j"$(nproc)" jpeg-static >make.log
)

EXPORTS='_malloc,_free,_sr_set_quant_tables,_sr_set_deadzone'
for f in create destroy message info header marker close_header add_marker clear_markers set_pixels channels \
  decode_frame frame free_frame fatal_warnings encode transcode chunk_count chunk output_len result_width \
  result_height clear_output encode_pixels; do
  EXPORTS="$EXPORTS,_sr_job_$f"
done

mkdir -p codec
# No eval and no filesystem (Workers allow neither); memory grows as a request needs and the instance
# is dropped afterwards (wasm/instances.ts). The module is compiled by wrangler and handed to the
# factory through instantiateWasm, so the glue never fetches anything.
emcc -O3 -msimd128 -I "$src" -I "$work/lib" \
  src/sr_io.c src/sr_job.c src/sr_encode.c src/sr_resize.c "$src/transupp.c" "$work/lib/libjpeg.a" \
  -o codec/sr_jpeg.js \
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createJpegModule -sENVIRONMENT=web,worker \
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=2MB \
  -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=2GB -sASSERTIONS=0 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS="$EXPORTS" -sEXPORTED_RUNTIME_METHODS=[] -sINCOMING_MODULE_JS_API=[instantiateWasm,locateFile,print,printErr,noInitialRun]

rm -rf "$work"
for f in codec/sr_jpeg.js codec/sr_jpeg.wasm; do
  printf '%-22s %8d bytes  %8d gzip  sha256 %s\n' "$f" "$(stat -c %s "$f")" "$(gzip -9n <"$f" | wc -c)" "$(sha256sum "$f" | cut -c1-16)"
done
