// The JavaScript side of srw_give_way (sr_webp_enc.c), linked into the engine's module by build.sh:
// libwebp's lossy encode is one call with no steps, so where its progress hook runs the encode may be
// suspended with emscripten's Asyncify and resumed on a later task, giving way to the other requests
// of the isolate. The caller (wasm/webp-engine.ts) sets Module.srGiveWay for the encode: given the
// pixels done, it answers a promise to wait for, or nothing to go on at once; unset, the encode runs
// through. Module.srAsyncDone() after an export returns: the promise of its result when it was
// suspended, else null.
mergeInto(LibraryManager.library, {
  srw_give_way__deps: ['$Asyncify'],
  srw_give_way__postset:
    "Module['srAsyncDone'] = function () { return Asyncify.currData ? Asyncify.whenDone() : null; };",
  // biome-ignore lint/complexity/useArrowFunction: emscripten 3.1.6 names a library function by rewriting its `function` keyword
  srw_give_way: function (pixels) {
    return Asyncify.handleSleep((wakeUp) => {
      const hook = Module.srGiveWay;
      const wait = hook ? hook(pixels >>> 0) : null;
      if (wait) wait.then(() => wakeUp(0));
      else wakeUp(0);
    });
  },
});
