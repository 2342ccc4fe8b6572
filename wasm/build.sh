#!/usr/bin/env bash
# Rebuilds wasm/codec/sr_jpeg.{js,wasm} (the JPEG and WebP engines, one module) from the vendored
# upstream sources and our C glue in wasm/src/, then the AVIF encoder (build-avif.sh, codec/sr_avif.*:
# about 12 minutes more on 2 idle cores, for libaom; SR_SKIP_AVIF=1 leaves it out while iterating here).
# Needs Debian's emscripten (apt-get install -y emscripten cmake) and nothing from the network.
# The built files are committed, so installing and testing the service needs none of this.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

LJT_VERSION=2.1.5
LJT_TARBALL="vendor/libjpeg-turbo-${LJT_VERSION}.tar.gz"
# The upstream release tarball, as Debian's source package libjpeg-turbo 1:2.1.5-2 carries it
# (libjpeg-turbo_2.1.5.orig.tar.gz); the same digest is in that package's .dsc.
LJT_SHA256=254f3642b04e309fee775123133c6464181addc150499561020312ec61c1bf7c
WEBP_VERSION=1.5.0
WEBP_TARBALL="vendor/libwebp_${WEBP_VERSION}.orig.tar.gz"
# Debian trixie's source package libwebp 1.5.0-0.1 (libwebp_1.5.0.orig.tar.gz, the upstream release);
# the same digest is in that package's .dsc. Its two Debian patches change only CMakeLists.txt's install
# rules, which this build does not use, so none is applied.
WEBP_SHA256=7d6fab70cf844bf6769077bd5d7a74893f8ffd4dfb42861745750c63c2a5c92c
# Fixed so that two builds of the same sources are byte-identical (libjpeg-turbo stamps a date otherwise).
BUILD_STAMP=20230208

require_emcc build.sh
emcc --version | sed -n 1p # sed reads to the end: head would close the pipe on emcc (BrokenPipeError under pipefail)

check_sha256 "$LJT_SHA256" "$LJT_TARBALL"
check_sha256 "$WEBP_SHA256" "$WEBP_TARBALL"
work="$here/.build"
# libwebp's assert() messages carry __FILE__: without this map the checkout's path would be in the
# module, and two checkouts would build different bytes from the same sources.
PREFIX_MAP="-fmacro-prefix-map=$work/=build/"
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
  emcmake cmake "$src" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O3 -msimd128 $PREFIX_MAP" \
    -DENABLE_SHARED=0 -DENABLE_STATIC=1 -DWITH_SIMD=0 -DWITH_TURBOJPEG=0 -DWITH_JAVA=0 \
    -DBUILD="$BUILD_STAMP" -DSIZE_T=4 -DUNSIGNED_LONG=4 >cmake.log
  emmake make -j"$(nproc)" jpeg-static >make.log
)

# libwebp's decoder, encoder and their DSP as a static library, compiled file by file (its CMake build
# wants tools we do not build): every .c of src/{dec,demux,dsp,enc,mux,utils} (mux: WebPAnimEncoder, for
# animated output, src/sr_webp_anim.c; demux: WebPAnimDecoder, for animated input, src/sr_webp_animdec.c)
# and sharpyuv/ (sharpyuv_cpu.c
# includes dsp/cpu.c under another name, so the two do not clash). -msse2: emscripten maps libwebp's
# SSE2 code onto WebAssembly SIMD, and libwebp's own wasm CPU check (dsp/cpu.c) enables it from the
# same compile flags. No threads.
tar -xzf "$WEBP_TARBALL" -C "$work"
webp="$work/libwebp-${WEBP_VERSION}"
# Our changes to libwebp (patches/webp/), each with its reason inside.
for patch in patches/webp/*.patch; do patch -s -d "$webp" -p1 <"$patch"; done
mkdir -p "$work/webp"
(cd "$webp" && ls src/dec/*.c src/demux/*.c src/dsp/*.c src/enc/*.c src/mux/*.c src/utils/*.c sharpyuv/*.c | LC_ALL=C sort) >"$work/webp/sources"
compile_each "-O3 -msimd128 -msse2 $PREFIX_MAP -I$webp -I$webp/src" "$webp" "$work/webp" libwebp.a

EXPORTS='_malloc,_free,_sr_set_quant_tables,_sr_set_deadzone,_sr_set_trellis,_sr_set_trellis_flat,_sr_set_trellis_model,_sr_set_aq,_sr_set_table_scale,_sr_set_scans,_sr_set_dither,_sr_set_align,_sr_set_chroma_sharpen,_sr_resizer_new,_sr_resizer_push_row,_sr_resizer_pull_row,_sr_resizer_free'
for f in create destroy message info header marker close_header add_marker clear_markers set_pixels channels \
  set_window decode_frame fill_step step_work encode_begin encode_step frame free_frame fatal_warnings rows_decoded encode transcode \
  transcode_begin transcode_step chunk_count chunk output_len result_width \
  result_height clear_output encode_pixels rows_begin rows_write rows_finish rows_finish_step pull_begin pull; do
  EXPORTS="$EXPORTS,_sr_job_$f"
done
for f in create destroy message info fill encode free_picture frame jpeg_job after_jpeg chunk_count chunk output_len \
  result_width result_height result_low_memory clear_output rows_begin rows_push fill_from_jpeg fill_from_jpeg_begin \
  fill_begin fill_step step_work \
  fill_from_jpeg_step pull_begin pull; do
  EXPORTS="$EXPORTS,_sr_webp_$f"
done
for f in begin frame add finish output output_len message destroy; do EXPORTS="$EXPORTS,_sr_webp_anim_$f"; done
for f in create info next destroy; do EXPORTS="$EXPORTS,_sr_webp_animdec_$f"; done

# libwebp's encode is one call: it gives way from its progress hook (sr_webp_enc.c, srw_give_way,
# src/sr_give_way.js) by Asyncify, which rewrites only the functions that can be on the stack there, as
# the optimiser leaves them (the same names appear in a build with --profiling-funcs; the list is the
# functions that a call path from sr_webp_encode to the hook passes through, direct calls read from that
# build's wasm-dis, plus the worker's and the hook's indirect calls): our encode's entry (srw_enc_finish
# and encode_once inlined into it), WebPEncode (the lossy analysis, loops and bitstream writer and the
# lossless VP8LEncodeImage inlined into it), VP8LEncodeStream, the worker interface's Execute (merged
# with the identical Launch, without threads), the two jobs it runs (the lossy analysis's DoSegmentsJob;
# the lossless EncodeStreamHook, run by VP8LEncodeStream, with its predictors and writer inlined), the
# lossless backward references (VP8LGetBackwardReferences, VP8LHashChainFill, and EncodeImageNoHuffman
# for the transforms' small images), the iterator's progress report, the report that calls the hook, and
# the hook. A lossy picture's alpha plane is encoded by VP8LEncodeStream too, on a picture of its own
# without the hook, so its callers (EncodeAlphaInternal, CompressAlphaJob) never suspend and are not listed.
ASYNCIFY_ONLY='sr_webp_encode,srw_progress,WebPEncode,Launch,DoSegmentsJob,VP8IteratorProgress,WebPReportProgress,VP8LEncodeStream,EncodeStreamHook,VP8LGetBackwardReferences,VP8LHashChainFill,EncodeImageNoHuffman'

mkdir -p codec
# No eval and no filesystem (Workers allow neither); memory grows as a request needs and the instance
# is dropped afterwards (wasm/instances.ts). The module is compiled by wrangler and handed to the
# factory through instantiateWasm, so the glue never fetches anything.
emcc -O3 -msimd128 -I "$src" -I "$work/lib" -I "$webp" -I "$webp/src" \
  src/sr_io.c src/sr_job.c src/sr_encode.c src/sr_quality.c src/sr_trellis.c src/sr_aq.c src/sr_resize.c "$src/transupp.c" "$work/lib/libjpeg.a" \
  src/sr_webp.c src/sr_webp_enc.c src/sr_webp_anim.c src/sr_webp_animdec.c "$work/webp/libwebp.a" \
  -o codec/sr_jpeg.js \
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createJpegModule -sENVIRONMENT=web,worker \
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sALLOW_MEMORY_GROWTH=1 -sMEMORY_GROWTH_GEOMETRIC_STEP=0 -sINITIAL_MEMORY=2MB \
  -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=2GB -sASSERTIONS=0 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS="$EXPORTS" -sEXPORTED_RUNTIME_METHODS=[] -sINCOMING_MODULE_JS_API=[instantiateWasm,locateFile,print,printErr,noInitialRun] \
  --js-library src/sr_give_way.js -sASYNCIFY=1 -sASYNCIFY_IMPORTS=[env.srw_give_way] -sASYNCIFY_ONLY="[$ASYNCIFY_ONLY]" \
  -sASYNCIFY_STACK_SIZE=16384

rm -rf "$work"
report codec/sr_jpeg.js codec/sr_jpeg.wasm

[ "${SR_SKIP_AVIF:-}" = 1 ] || bash "$here/build-avif.sh"
bash "$here/build-face.sh"
bash "$here/build-avifdec.sh" # the AVIF decoder (codec/sr_avifdec.*, about 3 minutes)
bash "$here/build-jxl.sh" # the JPEG XL encoder (codec/sr_jxl.*, libjxl, about 25 minutes on 2 cores)
bash "$here/build-heicdec.sh" # the HEIC decoder (codec/sr_heicdec.*, libheif and libde265: LGPL-3+, about 8 minutes)
