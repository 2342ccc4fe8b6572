#!/usr/bin/env bash
# Rebuilds wasm/codec/sr_avif.{js,wasm} (the AVIF encoder, its own module: only AVIF output loads it)
# from the vendored libaom and libavif sources and our C glue wasm/src/sr_avif.c.
# Needs Debian's emscripten (apt-get install -y emscripten cmake) and nothing from the network.
# libaom is the slow part: about 6 minutes of CMake checks and 15 of compiling on 2 cores.
# AVIF_BUILD_DIR keeps the build somewhere else (and keeps it afterwards) while iterating.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

AOM_VERSION=3.12.1
AOM_TARBALL="vendor/aom_${AOM_VERSION}.orig.tar.gz"
# Debian trixie's source package aom 3.12.1-1+deb13u1 (aom_3.12.1.orig.tar.gz, the upstream release);
# the same digest is in the package's .dsc. Its three security patches for the encoder are applied
# (patches/aom/, copied unmodified from the package's debian/patches/).
AOM_SHA256=40c929a41b2a59c24319a699c358351422829b3ae646de31b18cbabed0191962
AVIF_VERSION=1.4.2
# The part of Debian's libavif_1.4.2.orig.tar.gz (sha256 2b645287…921d, 14.7 MB, mostly test images)
# that this build compiles, file for file as in that tarball; README.md says how it is cut and checked.
AVIF_TARBALL="vendor/libavif-${AVIF_VERSION}-src.tar.gz"
AVIF_SHA256=bb7ae9b392748091f897c32843191fc4dd6c73376ef9987b35b424aaeaa91e80

if ! command -v emcc >/dev/null; then
  echo "build-avif.sh: emcc not found; install Debian's emscripten: apt-get install -y emscripten cmake" >&2
  exit 1
fi
export NODE_PATH=/usr/share/nodejs
echo "$AOM_SHA256  $AOM_TARBALL" | sha256sum -c --quiet -
echo "$AVIF_SHA256  $AVIF_TARBALL" | sha256sum -c --quiet -

work="${AVIF_BUILD_DIR:-$here/.build-avif}"
PREFIX_MAP="-fmacro-prefix-map=$work/=build/"
rm -rf "$work"
mkdir -p "$work/aom" "$work/avif"
tar -xzf "$AOM_TARBALL" -C "$work"
aom="$work/aom-${AOM_VERSION}"
for patch in patches/aom/*.patch; do patch -s -d "$aom" -p1 <"$patch"; done

# libaom's encoder alone, in generic C: its x86/Arm SIMD is assembly and intrinsics WebAssembly does not
# have, and WebAssembly has one CPU, so no run-time detection; no threads (a Worker has none); 8-bit
# only (the engine's pixels are 8-bit); no decoder, tools, examples, tests or docs.
(
  cd "$work/aom"
  emcmake cmake "$aom" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O3 -msimd128 $PREFIX_MAP" \
    -DCMAKE_CXX_FLAGS="-O3 -msimd128 $PREFIX_MAP" \
    -DAOM_TARGET_CPU=generic -DCONFIG_RUNTIME_CPU_DETECT=0 -DCONFIG_MULTITHREAD=0 \
    -DCONFIG_AV1_DECODER=0 -DCONFIG_AV1_HIGHBITDEPTH=0 -DCONFIG_REALTIME_ONLY=0 \
    -DENABLE_EXAMPLES=0 -DENABLE_TESTS=0 -DENABLE_TOOLS=0 -DENABLE_DOCS=0 -DENABLE_TESTDATA=0 \
    -DCONFIG_WEBM_IO=0 -DCONFIG_LIBYUV=0 -DBUILD_SHARED_LIBS=0 >cmake.log
  emmake make -j"$(nproc)" aom >make.log
)

# libavif compiled file by file (its CMake build looks for an installed libaom): the library's sources,
# the encoding half of its libaom codec, and the few libyuv scaling files it carries for builds without
# libyuv (what its CMake build compiles when libyuv is off).
tar -xzf "$AVIF_TARBALL" -C "$work"
avif="$work/libavif-${AVIF_VERSION}"
AVIF_CFLAGS="-O3 -msimd128 $PREFIX_MAP -DAVIF_CODEC_AOM=1 -DAVIF_CODEC_AOM_ENCODE=1 -I$avif/include -I$avif/third_party/libyuv/include -I$aom"
(cd "$avif" && ls src/*.c third_party/libyuv/source/*.c | LC_ALL=C sort) >"$work/avif/sources"
export AVIF_CFLAGS avif work
xargs -P "$(nproc)" -I{} sh -c 'emcc $AVIF_CFLAGS -c "$avif/$1" -o "$work/avif/$(echo "$1" | tr / _).o"' _ {} <"$work/avif/sources"
(cd "$work/avif" && LC_ALL=C ls *.o | xargs emar rcsD libavif.a)

EXPORTS='_malloc,_free'
for f in create destroy message option rows encode output output_len; do EXPORTS="$EXPORTS,_sr_avif_$f"; done

mkdir -p codec
# The same runtime settings as sr_jpeg (build.sh says why), in a module of its own.
emcc -O3 -msimd128 $PREFIX_MAP -I "$avif/include" src/sr_avif.c "$work/avif/libavif.a" "$work/aom/libaom.a" \
  -o codec/sr_avif.js \
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createAvifModule -sENVIRONMENT=web,worker \
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=2MB \
  -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=2GB -sASSERTIONS=0 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS="$EXPORTS" -sEXPORTED_RUNTIME_METHODS=[] -sINCOMING_MODULE_JS_API=[instantiateWasm,locateFile,print,printErr,noInitialRun]

[ -n "${AVIF_BUILD_DIR:-}" ] || rm -rf "$work"
for f in codec/sr_avif.js codec/sr_avif.wasm; do
  printf '%-22s %8d bytes  %8d gzip  sha256 %s\n' "$f" "$(stat -c %s "$f")" "$(gzip -9n <"$f" | wc -c)" "$(sha256sum "$f" | cut -c1-16)"
done
