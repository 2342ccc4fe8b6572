// The compression vars of wrangler.toml, read with their defaults. A var that is not a positive
// integer is a configuration mistake: it fails loudly (500, logged) rather than running unlimited.
import type { Env } from '../env.ts';
import { DEFAULT_MAX_CONCURRENT_COMPRESSIONS, DEFAULT_MAX_INPUT_PIXELS } from './limits.ts';

export interface CompressConfig {
  maxInputPixels: number;
  maxConcurrentCompressions: number;
}

function positiveInteger(name: string, value: string | number | undefined, fallback: number): number {
  if (value === undefined || String(value).trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`the var ${name} must be a non-negative integer, not "${value}"`);
  return n;
}

export function compressConfig(env: Env): CompressConfig {
  return {
    maxInputPixels: positiveInteger('MAX_INPUT_PIXELS', env.MAX_INPUT_PIXELS, DEFAULT_MAX_INPUT_PIXELS),
    maxConcurrentCompressions: positiveInteger('MAX_CONCURRENT_COMPRESSIONS', env.MAX_CONCURRENT_COMPRESSIONS, DEFAULT_MAX_CONCURRENT_COMPRESSIONS),
  };
}
