// The HEIC fixtures (test/fixtures/heic/) are bundled as bytes by wrangler.toml's Data rule.
declare module '*.heic' {
  const bytes: ArrayBuffer;
  export default bytes;
}
