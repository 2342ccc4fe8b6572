// The AVIF fixtures (test/fixtures/avif/) are bundled as bytes by wrangler.toml's Data rule.
declare module '*.avif' {
  const bytes: ArrayBuffer;
  export default bytes;
}
