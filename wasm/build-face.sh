#!/usr/bin/env bash
# Rebuilds wasm/codec/sr_face.{js,wasm}: the face detector of gravity=face, a module of its own (only a
# face crop loads it). Our C (src/sr_face.c) with the network src/cli/face-model.ts wrote (face/*.srf,
# compiled in as a byte array). Needs Debian's emscripten and xxd; seconds on one core; byte-identical
# from build to build (no paths or dates reach the output).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_emcc build-face.sh

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# xxd names the array after the file it reads: the model is copied to that name first.
cp face/blazeface-front.srf "$work/sr_face_model"
(cd "$work" && xxd -i sr_face_model >sr_face_model.h)

mkdir -p codec
# The same runtime settings as sr_jpeg (build.sh says why); its memory holds the network's weights
# (widened to float32) and its live activations, about 2 MB.
emcc -O3 -msimd128 -I "$work" src/sr_face.c -o codec/sr_face.js \
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createFaceModule -sENVIRONMENT=web,worker \
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sALLOW_MEMORY_GROWTH=1 -sMEMORY_GROWTH_GEOMETRIC_STEP=0 -sINITIAL_MEMORY=2MB \
  -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=64MB -sASSERTIONS=0 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS=_malloc,_free,_sr_face_picture,_sr_face_begin,_sr_face_pass,_sr_face_finish,_sr_face_boxes,_sr_face_message,_sr_face_network \
  -sEXPORTED_RUNTIME_METHODS=[] -sINCOMING_MODULE_JS_API=[instantiateWasm,locateFile,print,printErr,noInitialRun]

report codec/sr_face.js codec/sr_face.wasm face/blazeface-front.srf
