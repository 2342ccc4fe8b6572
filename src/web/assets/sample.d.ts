// The bundler's "Data" rule (wrangler.toml [[rules]]) imports a .jpg as its bytes.
declare module '*.jpg' {
  const bytes: ArrayBuffer;
  export default bytes;
}
