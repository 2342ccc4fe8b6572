#!/usr/bin/env bash
# Rebuilds wasm/codec/sr_jxl.{js,wasm} (the JPEG XL encoder, its own module: only JXL output loads it)
# from the vendored libjxl, highway, brotli and lcms2 sources and our C glue wasm/src/sr_jxl.c.
# Needs Debian's emscripten (apt-get install -y emscripten cmake) and nothing from the network.
# JXL_BUILD_DIR builds somewhere else and keeps the folder afterwards; while iterating on the glue, the
# libraries already built there are reused (delete the folder to rebuild them).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# All four are Debian trixie's source packages' upstream tarballs, unmodified; each digest is the one in
# the package's .dsc.
# jpeg-xl 0.11.2-0.1~deb13u3 (jpeg-xl_0.11.2.orig.tar.gz): Debian strips its third_party/ submodules, so
# the three libraries below are put where libjxl's CMake looks for them.
JXL_VERSION=0.11.2
JXL_TARBALL="vendor/jpeg-xl_${JXL_VERSION}.orig.tar.gz"
JXL_SHA256=ab38928f7f6248e2a98cc184956021acb927b16a0dee71b4d260dc040a4320ea
# highway 1.2.0-2 (SIMD, mapped onto WebAssembly SIMD by -msimd128).
HWY_VERSION=1.2.0
HWY_TARBALL="vendor/highway_${HWY_VERSION}.orig.tar.gz"
HWY_SHA256=7e0be78b8318e8bdbf6fa545d2ecb4c90f947df03f7aadc42c1967f019e63343
# brotli 1.1.0-2+deb13u1 (compresses the JPEG reconstruction data of a lossless JPEG transcode), with our
# patch (patches/brotli/) that compiles out its qualities 10 and 11 (Zopfli) and their tables.
BROTLI_TARBALL="vendor/brotli_1.1.0.orig.tar.gz"
BROTLI_SHA256=10973f4b4199eafa1d5735ef661ddb2ec2f97319ee9fd1824d4aabe08cff5265
# lcms2 2.16-2+deb13u2: libjxl needs a colour-management system to read an ICC profile (its other one,
# skcms, is not in Debian's tarball). The package's two security patches are applied (patches/lcms2/,
# copied unmodified from its debian/patches/); only src/ and include/ are taken out of the tarball.
LCMS_VERSION=2.16
LCMS_TARBALL="vendor/lcms2_${LCMS_VERSION}.orig.tar.gz"
LCMS_SHA256=d873d34ad8b9b4cea010631f1a6228d2087475e4dc5e763eb81acc23d9d45a51

require_emcc build-jxl.sh
check_sha256 "$JXL_SHA256" "$JXL_TARBALL"
check_sha256 "$HWY_SHA256" "$HWY_TARBALL"
check_sha256 "$BROTLI_SHA256" "$BROTLI_TARBALL"
check_sha256 "$LCMS_SHA256" "$LCMS_TARBALL"

work="${JXL_BUILD_DIR:-$here/.build-jxl}"
# CMake's build type sets the optimisation (its flags come after ours): MinSizeRel (-Os), linked at -Oz,
# was 795 KiB gzipped against Release's (-O3) 935, at the same speed within the machine's noise and the
# same output bytes (docs/experiments/jxl.md); with Asyncify's rewrite (below) it is 799.98 KiB, just under
# the issue's share for the module, 800 KiB; 675 KiB since brotli's patch (below).
JXL_BUILD_TYPE="${JXL_BUILD_TYPE:-MinSizeRel}"
PREFIX_MAP="-fmacro-prefix-map=$work/=build/"
jxl="$work/libjxl-${JXL_VERSION}"
if [ -n "${JXL_BUILD_DIR:-}" ] && [ -f "$work/lib/lib/libjxl.a" ]; then
  echo "build-jxl.sh: reusing the libraries in $work/lib" >&2
else
  rm -rf "$work"
  mkdir -p "$work/lib"
  tar -xzf "$JXL_TARBALL" -C "$work"
  tp="$jxl/third_party"
  rmdir "$tp/highway" "$tp/brotli" "$tp/lcms" 2>/dev/null || true
  mkdir -p "$tp/highway" "$tp/brotli" "$tp/lcms"
  tar -xzf "$HWY_TARBALL" -C "$tp/highway" --strip-components=1
  tar -xzf "$BROTLI_TARBALL" -C "$tp/brotli" --strip-components=1
  tar -xzf "$LCMS_TARBALL" -C "$tp/lcms" --strip-components=1 "lcms2-${LCMS_VERSION}/src" "lcms2-${LCMS_VERSION}/include" \
    "lcms2-${LCMS_VERSION}/LICENSE"
  for patch in patches/lcms2/*.patch; do patch -s -d "$tp/lcms" -p1 <"$patch"; done
  # Ours: nothing libjxl asks of brotli needs its quality 10 or 11, whose tables kept 128 KB (gzipped) in
  # the module (the patch's header says why and what).
  for patch in patches/brotli/*.patch; do patch -s -d "$tp/brotli" -p1 <"$patch"; done
  # Ours: the encoder's longest loops give way (the patch's header says why).
  for patch in patches/jxl/*.patch; do patch -s -d "$jxl" -p1 <"$patch"; done
  # libjxl's CMake takes third_party/lcms for a checked-out submodule only when it has a .git.
  touch "$tp/lcms/.git"
  # The library alone, static: no tools, jpegli, tests, examples or docs; no threads (a Worker has none).
  # CMake's own reproducibility flag (-fmacro-prefix-map) is set by libjxl for its sources; ours covers
  # the third-party ones.
  (
    cd "$work/lib"
    emcmake cmake "$jxl" -DCMAKE_BUILD_TYPE="$JXL_BUILD_TYPE" -DCMAKE_C_FLAGS="-msimd128 $PREFIX_MAP" \
      -DCMAKE_CXX_FLAGS="-msimd128 $PREFIX_MAP" -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF \
      -DJPEGXL_ENABLE_TOOLS=OFF -DJPEGXL_ENABLE_JPEGLI=OFF -DJPEGXL_ENABLE_DEVTOOLS=OFF -DJPEGXL_ENABLE_BENCHMARK=OFF \
      -DJPEGXL_ENABLE_EXAMPLES=OFF -DJPEGXL_ENABLE_MANPAGES=OFF -DJPEGXL_ENABLE_DOXYGEN=OFF -DJPEGXL_ENABLE_SJPEG=OFF \
      -DJPEGXL_ENABLE_OPENEXR=OFF -DJPEGXL_ENABLE_JNI=OFF -DJPEGXL_ENABLE_PLUGINS=OFF -DJPEGXL_ENABLE_SKCMS=OFF \
      -DJPEGXL_BUNDLE_LIBPNG=OFF -DJPEGXL_ENABLE_WASM_THREADS=OFF -DJPEGXL_ENABLE_TRANSCODE_JPEG=ON \
      -DJPEGXL_ENABLE_BOXES=ON -DJPEGXL_ENABLE_FUZZERS=OFF >cmake.log
    emmake make -j"$(nproc)" jxl jxl_cms >make.log
  )
fi

libs=$(cd "$work/lib" && find . -name 'libjxl.a' -o -name 'libjxl_cms.a' -o -name 'libhwy.a' -o -name 'libbrotlienc.a' \
  -o -name 'libbrotlicommon.a' -o -name 'liblcms2.a' | LC_ALL=C sort | sed "s|^\.|$work/lib|")
echo "$libs" >&2

EXPORTS='_malloc,_free'
for f in create create_empty destroy message icc metadata rows encode jpeg output output_len; do
  EXPORTS="$EXPORTS,_sr_jxl_$f"
done

# The encode is one libjxl call: it gives way after each tile or group of its two longest loops
# (patches/jxl/, sr_jxl_give_way in src/sr_jxl.c, srw_give_way in src/sr_give_way.js) by Asyncify, which
# rewrites only the functions that can be on the stack there, from our encode export down to the hook
# (src/sr_jxl_asyncify.txt, C++ names with wildcards for the loops' lambdas): libjxl's flush, the frame
# encode and the two loops' ThreadPool::Run, call state and lambdas. The list was read from a
# --profiling-funcs build's call graph (-sASYNCIFY_ADVISE with -sASYNCIFY_IGNORE_INDIRECT: no indirect
# call is on that stack), less the paths an effort of 5 never takes (patches and the butteraugli
# loop from effort 7 and 8: sr_jxl.c gives way only up to SR_JXL_GIVE_WAY_MAX_EFFORT, 6); a function
# missing from it traps at the first suspension, which test/worker/jxl-output.test.ts exercises.
ASYNCIFY_ONLY="${ASYNCIFY_ONLY_OVERRIDE:-@src/sr_jxl_asyncify.txt}"

mkdir -p codec
# The glue is C, compiled apart; libjxl is C++, so em++ links (its C++ runtime).
emcc -Oz -msimd128 $PREFIX_MAP -I "$jxl/lib/include" -I "$work/lib/lib/include" -c src/sr_jxl.c -o "$work/sr_jxl.o"
# The same runtime settings as sr_jpeg (build.sh says why), in a module of its own.
em++ -Oz -msimd128 "$work/sr_jxl.o" $libs \
  -o codec/sr_jxl.js ${JXL_LINK_EXTRA:-} \
  --js-library src/sr_give_way.js -sASYNCIFY=1 -sASYNCIFY_IMPORTS=[env.srw_give_way] -sASYNCIFY_ONLY="$ASYNCIFY_ONLY" \
  -sASYNCIFY_IGNORE_INDIRECT=1 -sASYNCIFY_STACK_SIZE=16384 \
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createJxlModule -sENVIRONMENT=web,worker \
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sALLOW_MEMORY_GROWTH=1 -sMEMORY_GROWTH_GEOMETRIC_STEP=0 -sINITIAL_MEMORY=2MB \
  -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=2GB -sASSERTIONS=0 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS="$EXPORTS" -sEXPORTED_RUNTIME_METHODS=[] -sINCOMING_MODULE_JS_API=[instantiateWasm,locateFile,print,printErr,noInitialRun]

# Asyncify's rewrite leaves the module about 10 KB (gzipped) larger; a second -Oz pass over the whole
# module (merging similar functions) takes back about 4 (docs/experiments/jxl.md), which keeps it within
# the issue's 800 KiB.
wasm-opt --merge-similar-functions -Oz --low-memory-unused --zero-filled-memory --enable-simd --enable-mutable-globals \
  codec/sr_jxl.wasm -o codec/sr_jxl.wasm

[ -n "${JXL_BUILD_DIR:-}" ] || rm -rf "$work"
report codec/sr_jxl.js codec/sr_jxl.wasm
