// The package's version, sent in User-Agent. A constant rather than an import of package.json, which not
// every runtime and bundler the core supports can read; a test keeps the two equal.
export const VERSION = '0.1.0';
