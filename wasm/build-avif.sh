#!/usr/bin/env bash
# Rebuilds wasm/codec/sr_avif.{js,wasm} (the AVIF encoder, its own module: only AVIF output loads it)
# from the vendored libaom and libavif sources and our C glue wasm/src/sr_avif.c.
# Needs Debian's emscripten (apt-get install -y emscripten cmake) and nothing from the network.
# libaom is the slow part: about 6 minutes of CMake checks and 5 of compiling on 2 idle cores.
# AVIF_BUILD_DIR builds somewhere else and keeps the folder afterwards; while iterating on the glue, a
# libaom.a already built there is reused (delete the folder to rebuild libaom, e.g. after a patch changes).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

AOM_VERSION=3.12.1
AOM_TARBALL="vendor/aom_${AOM_VERSION}.orig.tar.gz"
# Debian trixie's source package aom 3.12.1-1+deb13u1 (aom_3.12.1.orig.tar.gz, the upstream release);
# the same digest is in the package's .dsc. Its three security patches for the encoder are applied
# (patches/aom/, copied unmodified from the package's debian/patches/).
AOM_SHA256=40c929a41b2a59c24319a699c358351422829b3ae646de31b18cbabed0191962
AVIF_VERSION=1.4.2
# Debian's source package libavif 1.4.2-1 (forky/sid) upstream tarball, unmodified: the digest in its
# .dsc; its Debian patch series is empty. Only the library's sources are extracted from it (most of its
# 14.7 MB is test images). wasm/README.md says why this version and not trixie's 1.2.1.
AVIF_TARBALL="vendor/libavif_${AVIF_VERSION}.orig.tar.gz"
AVIF_SHA256=2b645287340ba5a631d268b551dc2d72bd73ac33335962dd36dcdb6d8366921d

require_emcc build-avif.sh
check_sha256 "$AOM_SHA256" "$AOM_TARBALL"
check_sha256 "$AVIF_SHA256" "$AVIF_TARBALL"

work="${AVIF_BUILD_DIR:-$here/.build-avif}"
PREFIX_MAP="-fmacro-prefix-map=$work/=build/"
aom="$work/aom-${AOM_VERSION}"
reuse_aom=
if [ -n "${AVIF_BUILD_DIR:-}" ] && [ -f "$work/aom/libaom.a" ]; then
  reuse_aom=1
  echo "build-avif.sh: reusing $work/aom/libaom.a" >&2
  rm -rf "$work/avif" "$work/libavif-${AVIF_VERSION}"
else
  rm -rf "$work"
  mkdir -p "$work/aom"
  tar -xzf "$AOM_TARBALL" -C "$work"
  for patch in patches/aom/*.patch; do patch -s -d "$aom" -p1 <"$patch"; done
fi
mkdir -p "$work/avif"

# libaom's encoder alone, in generic C: its x86/Arm SIMD is assembly and intrinsics WebAssembly does not
# have, and WebAssembly has one CPU, so no run-time detection; no threads (a Worker has none); with the
# high bit depth path (the engine's 8-bit pixels are coded at 10 bits: AVIF_DEPTH in avif-settings.ts);
# no decoder, tools, examples, tests or docs.
[ -n "$reuse_aom" ] || (
  cd "$work/aom"
  emcmake cmake "$aom" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O3 -msimd128 $PREFIX_MAP" \
    -DCMAKE_CXX_FLAGS="-O3 -msimd128 $PREFIX_MAP" \
    -DAOM_TARGET_CPU=generic -DCONFIG_RUNTIME_CPU_DETECT=0 -DCONFIG_MULTITHREAD=0 \
    -DCONFIG_AV1_DECODER=0 -DCONFIG_AV1_HIGHBITDEPTH=1 -DCONFIG_REALTIME_ONLY=0 \
    -DENABLE_EXAMPLES=0 -DENABLE_TESTS=0 -DENABLE_TOOLS=0 -DENABLE_DOCS=0 -DENABLE_TESTDATA=0 \
    -DCONFIG_WEBM_IO=0 -DCONFIG_LIBYUV=0 -DBUILD_SHARED_LIBS=0 >cmake.log
  emmake make -j"$(nproc)" aom >make.log
)

# libavif compiled file by file (its CMake build looks for an installed libaom): the library's sources
# without the other codecs' glue (dav1d, libgav1, rav1e, SVT-AV1, AVM), the encoding half of its libaom
# codec, and the few libyuv scaling files it carries for builds without libyuv (what its CMake build
# compiles when libyuv is off). Only those folders are taken out of the tarball.
tar -xzf "$AVIF_TARBALL" -C "$work" "libavif-${AVIF_VERSION}/include" "libavif-${AVIF_VERSION}/src" \
  "libavif-${AVIF_VERSION}/third_party/libyuv"
avif="$work/libavif-${AVIF_VERSION}"
(cd "$avif" && ls src/*.c third_party/libyuv/source/*.c | grep -Ev '^src/codec_(avm|dav1d|libgav1|rav1e|svt)\.c$' |
  LC_ALL=C sort) >"$work/avif/sources"
AVIF_CFLAGS="-O3 -msimd128 $PREFIX_MAP -DAVIF_CODEC_AOM=1 -DAVIF_CODEC_AOM_ENCODE=1 -I$avif/include -I$avif/third_party/libyuv/include -I$aom"
# libavif's table of codecs (src/avif.c) creates its libaom codec through the glue's sr_avif_codec_create,
# which replays the cells the glue encoded one call at a time (sr_avif.c says why): the name is changed in
# that one file by the preprocessor, the tarball's source is not edited.
grep -vx 'src/avif.c' "$work/avif/sources" >"$work/avif/sources.rest" && mv "$work/avif/sources.rest" "$work/avif/sources"
emcc $AVIF_CFLAGS -DavifCodecCreateAOM=sr_avif_codec_create -c "$avif/src/avif.c" -o "$work/avif/src_avif.c.o"
compile_each "$AVIF_CFLAGS" "$avif" "$work/avif" libavif.a

EXPORTS='_malloc,_free'
for f in create destroy message option icc exif xmp gain_map rows encode_begin encode_cell encode_finish output output_len; do EXPORTS="$EXPORTS,_sr_avif_$f"; done

# A cell is one libaom call: it gives way after every superblock and every row of the CDEF search
# (patches/aom/0101-*, srw_give_way in src/sr_give_way.js, as the AVIF decoder's dav1d does) by Asyncify,
# which rewrites only the functions that can be on the stack there, from our cell export down to the
# hook: libavif's libaom codec (reached by a function pointer), aom_codec_encode and libaom's encoder
# interface (another), then the frame encode down to the superblock loop and the CDEF search. The list was read
# from a --profiling-funcs build's call graph (-sASYNCIFY_ADVISE with -sASYNCIFY_IGNORE_INDIRECT) plus
# what that graph cannot follow: those two function pointers, and the calls of libaom's functions that
# set a setjmp error handler (encoder_encode, av1_get_compressed_data), which go through emscripten's
# invoke_* wrappers (Asyncify counts them as imports that may suspend). A function missing from it traps
# with `unreachable` at the first suspension, which test/worker/isolate-stall.test.ts exercises. wasm-opt
# inlines part of the chain and warns that those names do not exist: they stay listed for a build that
# inlines less.
ASYNCIFY_ONLY="${ASYNCIFY_ONLY_OVERRIDE:-sr_avif_encode_cell,encode_one,aomCodecEncodeImage,aom_codec_encode,encoder_encode,av1_get_compressed_data,av1_encode_strategy,av1_encode,encode_frame_to_data_rate,encode_with_recode_loop_and_filter,encode_without_recode,loopfilter_frame,cdef_restoration_frame,av1_cdef_search,cdef_mse_calc_frame,av1_encode_frame,encode_frame_internal,encode_tiles,av1_encode_tile,av1_encode_sb_row,encode_sb_row}"

mkdir -p codec
# The same runtime settings as sr_jpeg (build.sh says why), in a module of its own.
emcc -O3 -msimd128 $PREFIX_MAP -I "$avif/include" src/sr_avif.c "$work/avif/libavif.a" "$work/aom/libaom.a" \
  -o codec/sr_avif.js ${AVIF_LINK_EXTRA:-} \
  --js-library src/sr_give_way.js -sASYNCIFY=1 -sASYNCIFY_IMPORTS=[env.srw_give_way] -sASYNCIFY_ONLY="[$ASYNCIFY_ONLY]" \
  -sASYNCIFY_STACK_SIZE=16384 \
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createAvifModule -sENVIRONMENT=web,worker \
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sALLOW_MEMORY_GROWTH=1 -sMEMORY_GROWTH_GEOMETRIC_STEP=0 -sINITIAL_MEMORY=2MB \
  -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=2GB -sASSERTIONS=0 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS="$EXPORTS" -sEXPORTED_RUNTIME_METHODS=[] -sINCOMING_MODULE_JS_API=[instantiateWasm,locateFile,print,printErr,noInitialRun]

[ -n "${AVIF_BUILD_DIR:-}" ] || rm -rf "$work"
report codec/sr_avif.js codec/sr_avif.wasm
