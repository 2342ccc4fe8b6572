#!/usr/bin/env bash
# Rebuilds wasm/codec/sr_avifdec.{js,wasm} (the AVIF decoder, its own module: only an AVIF input loads it)
# from the vendored dav1d and libavif sources and our C glue wasm/src/sr_avifdec.c.
# Needs Debian's emscripten (apt-get install -y emscripten) and nothing from the network: no meson, no
# nasm. About 2 minutes on 2 idle cores. AVIFDEC_BUILD_DIR builds somewhere else and keeps the folder.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

DAV1D_VERSION=1.5.1
# Debian trixie's source package dav1d 1.5.1-1 (dav1d_1.5.1.orig.tar.xz, the upstream release); the same
# digest is in dav1d_1.5.1-1.dsc. Its Debian patch series is empty.
DAV1D_TARBALL="vendor/dav1d_${DAV1D_VERSION}.orig.tar.xz"
DAV1D_SHA256=401813f1f89fa8fd4295805aa5284d9aed9bc7fc1fdbe554af4292f64cbabe21
# The libavif tarball build-avif.sh vendors and checks (its README section says which and why).
AVIF_VERSION=1.4.2
AVIF_TARBALL="vendor/libavif_${AVIF_VERSION}.orig.tar.gz"
AVIF_SHA256=2b645287340ba5a631d268b551dc2d72bd73ac33335962dd36dcdb6d8366921d

require_emcc build-avifdec.sh
check_sha256 "$DAV1D_SHA256" "$DAV1D_TARBALL"
check_sha256 "$AVIF_SHA256" "$AVIF_TARBALL"

work="${AVIFDEC_BUILD_DIR:-$here/.build-avifdec}"
PREFIX_MAP="-fmacro-prefix-map=$work/=build/"
rm -rf "$work"
mkdir -p "$work/dav1d8" "$work/dav1d16" "$work/dav1d" "$work/avif" "$work/config"
tar -xJf "$DAV1D_TARBALL" -C "$work"
dav1d="$work/dav1d-${DAV1D_VERSION}"
for patch in patches/dav1d/*.patch; do [ -e "$patch" ] && patch -s -d "$dav1d" -p1 <"$patch"; done

# What dav1d's meson build would write into config.h for wasm32 without assembly (meson is not needed
# for this): both bit depths (8 for 8-bit AVIF, 16 for 10- and 12-bit), no threads used (libavif asks
# for one), no logging, DSP functions trimmed as in its release builds.
cat >"$work/config/config.h" <<'H'
#define ARCH_AARCH64 0
#define ARCH_ARM 0
#define ARCH_LOONGARCH 0
#define ARCH_LOONGARCH32 0
#define ARCH_LOONGARCH64 0
#define ARCH_PPC64LE 0
#define ARCH_RISCV 0
#define ARCH_RV32 0
#define ARCH_RV64 0
#define ARCH_X86 0
#define ARCH_X86_32 0
#define ARCH_X86_64 0
#define CONFIG_16BPC 1
#define CONFIG_8BPC 1
#define CONFIG_LOG 0
#define CONFIG_MACOS_KPERF 0
#define ENDIANNESS_BIG 0
#define HAVE_ASM 0
#define HAVE_ALIGNED_ALLOC 1
#define HAVE_C11_GENERIC 1
#define HAVE_CLOCK_GETTIME 1
#define HAVE_DLSYM 0
#define HAVE_ELF_AUX_INFO 0
#define HAVE_GETAUXVAL 0
#define HAVE_IO_H 0
#define HAVE_MEMALIGN 0
#define HAVE_POSIX_MEMALIGN 1
#define HAVE_PTHREAD_GETAFFINITY_NP 0
#define HAVE_PTHREAD_NP_H 0
#define HAVE_PTHREAD_SETAFFINITY_NP 0
#define HAVE_PTHREAD_SETNAME_NP 0
#define HAVE_PTHREAD_SET_NAME_NP 0
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define TRIM_DSP_FUNCTIONS 1
H
echo "#define DAV1D_VERSION \"${DAV1D_VERSION}\"" >"$work/config/vcs_version.h"

# dav1d's file list from its src/meson.build: the common sources once, the bit-depth templates twice
# (-DBITDEPTH=8 and 16, as meson's two static libraries), none of the architecture folders.
DAV1D_CFLAGS="-O3 -msimd128 -std=c99 -D_GNU_SOURCE -fvisibility=hidden -ffast-math -fomit-frame-pointer $PREFIX_MAP -I$work/config -I$dav1d -I$dav1d/include -I$dav1d/include/dav1d"
(cd "$dav1d" && for f in cdf cpu ctx data decode dequant_tables getbits intra_edge itx_1d lf_mask lib log mem msac obu pal picture qm ref refmvs scan tables thread_task warpmv wedge; do echo "src/$f.c"; done) >"$work/dav1d/sources"
(cd "$dav1d" && for f in cdef_apply cdef fg_apply filmgrain ipred_prepare ipred itx lf_apply loopfilter looprestoration lr_apply mc recon; do echo "src/${f}_tmpl.c"; done) >"$work/dav1d8/sources"
cp "$work/dav1d8/sources" "$work/dav1d16/sources"
compile_each "$DAV1D_CFLAGS" "$dav1d" "$work/dav1d" libdav1d.a
compile_each "$DAV1D_CFLAGS -DBITDEPTH=8" "$dav1d" "$work/dav1d8" libdav1d8.a
compile_each "$DAV1D_CFLAGS -DBITDEPTH=16" "$dav1d" "$work/dav1d16" libdav1d16.a

# libavif's decoding half over dav1d, file by file: its sources without the other codecs' glue, and the
# libyuv scaling subset its CMake build compiles when libyuv is off.
tar -xzf "$AVIF_TARBALL" -C "$work" "libavif-${AVIF_VERSION}/include" "libavif-${AVIF_VERSION}/src" \
  "libavif-${AVIF_VERSION}/third_party/libyuv"
avif="$work/libavif-${AVIF_VERSION}"
(cd "$avif" && ls src/*.c third_party/libyuv/source/*.c | grep -Ev '^src/codec_(aom|avm|libgav1|rav1e|svt)\.c$' |
  LC_ALL=C sort) >"$work/avif/sources"
AVIF_CFLAGS="-O3 -msimd128 $PREFIX_MAP -DAVIF_CODEC_DAV1D=1 -I$avif/include -I$avif/third_party/libyuv/include -I$dav1d/include -I$work/config"
compile_each "$AVIF_CFLAGS" "$avif" "$work/avif" libavif.a

EXPORTS='_malloc,_free'
for f in create destroy message parse info icc exif xmp step rows to_srgb; do EXPORTS="$EXPORTS,_sr_avifdec_$f"; done

# A non-grid picture is one dav1d call: it gives way at the end of every superblock row
# (patches/dav1d/, srw_give_way in src/sr_give_way.js, the WebP encoder's) by Asyncify, which rewrites
# only the functions that can be on the stack there, from our step export down to the hook: libavif's
# avifDecoderNextImage path and its dav1d glue (reached by a function pointer), dav1d's send/get
# picture and frame decode. The list was read from a --profiling-funcs build's call graph (the direct
# calls to srw_give_way's callers, -sASYNCIFY_ADVISE with -sASYNCIFY_IGNORE_INDIRECT) plus that indirect
# call; a function missing from it traps with `unreachable` at the first suspension, which
# test/worker/isolate-stall.test.ts exercises. wasm-opt inlines most of the chain into sr_avifdec_step and
# gen_picture and warns that those names do not exist: they stay listed for a build that inlines less.
ASYNCIFY_ONLY="${ASYNCIFY_ONLY_OVERRIDE:-sr_avifdec_step,avifDecoderNextImage,avifDecoderDecodeTiles,dav1dCodecGetNextImage,dav1d_send_data,dav1d_get_picture,gen_picture,dav1d_parse_obus,dav1d_submit_frame,dav1d_decode_frame,dav1d_decode_frame_main}"

mkdir -p codec
# The same runtime settings as sr_jpeg and sr_avif (build.sh says why), in a module of its own.
emcc -O3 -msimd128 $PREFIX_MAP -I "$avif/include" src/sr_avifdec.c "$work/avif/libavif.a" \
  "$work/dav1d/libdav1d.a" "$work/dav1d8/libdav1d8.a" "$work/dav1d16/libdav1d16.a" \
  -o codec/sr_avifdec.js ${AVIFDEC_LINK_EXTRA:-} \
  --js-library src/sr_give_way.js -sASYNCIFY=1 -sASYNCIFY_IMPORTS=[env.srw_give_way] -sASYNCIFY_ONLY="[$ASYNCIFY_ONLY]" \
  -sASYNCIFY_STACK_SIZE=16384 \
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createAvifDecModule -sENVIRONMENT=web,worker \
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sALLOW_MEMORY_GROWTH=1 -sMEMORY_GROWTH_GEOMETRIC_STEP=0 -sINITIAL_MEMORY=2MB \
  -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=2GB -sASSERTIONS=0 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS="$EXPORTS" -sEXPORTED_RUNTIME_METHODS=[] -sINCOMING_MODULE_JS_API=[instantiateWasm,locateFile,print,printErr,noInitialRun]

[ -n "${AVIFDEC_BUILD_DIR:-}" ] || rm -rf "$work"
report codec/sr_avifdec.js codec/sr_avifdec.wasm
