#!/usr/bin/env bash
# Rebuilds wasm/codec/sr_heicdec.{js,wasm} (the HEIC/HEIF decoder, its own module: only a HEIC input loads
# it; libheif and libde265 are LGPL-3+, so it stays a separate, replaceable .wasm) from the vendored
# libde265 and libheif sources and our C glue wasm/src/sr_heicdec.c.
# Needs Debian's emscripten (apt-get install -y emscripten) and nothing from the network: no cmake, each
# C++ file is compiled by em++ from the lists in the libraries' CMakeLists.txt. HEICDEC_BUILD_DIR builds
# somewhere else and keeps the folder.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

DE265_VERSION=1.0.15
# Debian trixie's source package libde265 1.0.15-1+deb13u2: its .orig.tar.gz (upstream's release), the digest
# in libde265_1.0.15-1+deb13u2.dsc. The package's patches that touch the decoder are in patches/libde265/.
DE265_TARBALL="vendor/libde265_${DE265_VERSION}.orig.tar.gz"
DE265_SHA256=00251986c29d34d3af7117ed05874950c875dd9292d016be29d3b3762666511d
# Debian's source package libheif 1.19.8-1 (trixie's release): its .orig.tar.gz, the digest in
# libheif_1.19.8-1.dsc (wasm/README.md says why not trixie's newer security upload). Its patch series is empty.
HEIF_VERSION=1.19.8
HEIF_TARBALL="vendor/libheif_${HEIF_VERSION}.orig.tar.gz"
HEIF_SHA256=6c4a5b08e6eae66d199977468859dea3b5e059081db8928f7c7c16e53836c906

require_emcc build-heicdec.sh
check_sha256 "$DE265_SHA256" "$DE265_TARBALL"
check_sha256 "$HEIF_SHA256" "$HEIF_TARBALL"

work="${HEICDEC_BUILD_DIR:-$here/.build-heicdec}"
PREFIX_MAP="-fmacro-prefix-map=$work/=build/ -ffile-prefix-map=$work/=build/"
rm -rf "$work"
mkdir -p "$work/de265" "$work/heif" "$work/include/libde265" "$work/include/libheif"
tar -xzf "$DE265_TARBALL" -C "$work" "libde265-${DE265_VERSION}/libde265"
de265="$work/libde265-${DE265_VERSION}"
for patch in patches/libde265/*.patch; do patch -s -d "$de265" -p1 <"$patch"; done
tar -xzf "$HEIF_TARBALL" -C "$work" "libheif-${HEIF_VERSION}/libheif"
heif="$work/libheif-${HEIF_VERSION}"
for patch in patches/libheif/*.patch; do patch -s -d "$heif" -p1 <"$patch"; done

# What CMake would write: libde265's version header (its .h.in with the release's numbers) and libheif's.
sed -e 's/@NUMERIC_VERSION@/0x01000f00/' -e "s/@PACKAGE_VERSION@/${DE265_VERSION}/" \
  "$de265/libde265/de265-version.h.in" >"$work/include/libde265/de265-version.h"
cp "$de265/libde265/de265.h" "$de265/libde265/en265.h" "$work/include/libde265/"
sed -e 's/@PROJECT_VERSION_MAJOR@/1/g' -e 's/@PROJECT_VERSION_MINOR@/19/g' -e 's/@PROJECT_VERSION_PATCH@/8/g' \
  -e 's#@PLUGIN_DIRECTORY@##' "$heif/libheif/api/libheif/heif_version.h.in" >"$work/include/libheif/heif_version.h"

# libde265's decoder from its libde265/CMakeLists.txt, without the encoder (en265.cc and encoder/) and
# without the x86/arm assembly folders; no threads are started (libheif's Emscripten branch).
(cd "$de265" && for f in alloc_pool bitstream cabac configparam contextmodel de265 deblock decctx dpb fallback-dct \
  fallback-motion fallback image-io image intrapred md5 motion nal-parser nal pps quality refpic sao scan sei slice \
  sps threads transform util visualize vps vui; do echo "libde265/$f.cc"; done) >"$work/de265/sources"
DE265_CFLAGS="-O3 -msimd128 -std=c++11 -fvisibility=hidden $PREFIX_MAP -DHAVE_STDINT_H -DHAVE_STDBOOL_H -I$work/include -I$de265 -I$de265/libde265"
compile_each "$DE265_CFLAGS" "$de265" "$work/de265" libde265.a

# libheif's sources from its libheif/CMakeLists.txt: the core, the HEVC path and the libde265 plugin
# (compiled in, HAVE_LIBDE265), no plugin loading, no other codec's plugin, no zlib/brotli (uncompressed
# and mini formats off). The other codecs' item classes stay: libheif's core refers to them.
(cd "$heif" && {
  for f in bitstream box error context file file_layout pixelimage plugin_registry nclx security_limits init logging \
    compression_brotli compression_zlib common_utils region api/libheif/heif api/libheif/heif_regions \
    api/libheif/heif_plugin api/libheif/heif_properties api/libheif/heif_items codecs/decoder image-items/hevc \
    codecs/hevc_boxes codecs/hevc_dec image-items/avif codecs/avif_dec codecs/avif_boxes image-items/jpeg \
    codecs/jpeg_boxes codecs/jpeg_dec image-items/jpeg2000 codecs/jpeg2000_dec codecs/jpeg2000_boxes image-items/vvc \
    codecs/vvc_dec codecs/vvc_boxes image-items/avc codecs/avc_boxes codecs/avc_dec image-items/mask_image \
    image-items/image_item image-items/grid image-items/overlay image-items/iden image-items/tiled \
    color-conversion/colorconversion color-conversion/rgb2yuv color-conversion/rgb2yuv_sharp \
    color-conversion/yuv2rgb color-conversion/rgb2rgb color-conversion/monochrome color-conversion/hdr_sdr \
    color-conversion/alpha color-conversion/chroma_sampling plugins/decoder_libde265 plugins/encoder_mask \
    plugins/nalu_utils; do echo "libheif/$f.cc"; done
} | LC_ALL=C sort) >"$work/heif/sources"
HEIF_CFLAGS="-O3 -msimd128 -std=c++20 -fvisibility=hidden $PREFIX_MAP -DHAVE_LIBDE265=1 -DSHRINKRAY_C_API_ONLY -DLIBHEIF_STATIC_BUILD -I$work/include -I$work/include/libheif -I$heif/libheif -I$heif/libheif/api"
compile_each "$HEIF_CFLAGS" "$heif" "$work/heif" libheif.a

EXPORTS='_malloc,_free'
for f in create destroy message parse info icc exif xmp row tile; do EXPORTS="$EXPORTS,_sr_heicdec_$f"; done

mkdir -p codec
# The same runtime settings as sr_avifdec (build.sh says why), in a module of its own; no C++ exceptions
# cross the glue (libheif answers errors as values).
emcc -O3 -msimd128 $PREFIX_MAP -DLIBHEIF_STATIC_BUILD -I "$heif/libheif/api" -I "$work/include" -c src/sr_heicdec.c -o "$work/sr_heicdec.o"
em++ -O3 -msimd128 $PREFIX_MAP "$work/sr_heicdec.o" "$work/heif/libheif.a" "$work/de265/libde265.a" \
  -o codec/sr_heicdec.js \
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createHeicDecModule -sENVIRONMENT=web,worker \
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sALLOW_MEMORY_GROWTH=1 -sMEMORY_GROWTH_GEOMETRIC_STEP=0 -sINITIAL_MEMORY=2MB \
  -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=2GB -sASSERTIONS=0 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS="$EXPORTS" -sEXPORTED_RUNTIME_METHODS=[] -sINCOMING_MODULE_JS_API=[instantiateWasm,locateFile,print,printErr,noInitialRun]

[ -n "${HEICDEC_BUILD_DIR:-}" ] || rm -rf "$work"
report codec/sr_heicdec.js codec/sr_heicdec.wasm
