// The compression vars of wrangler.toml, read with their defaults.
import { integerVar, type Env } from '../env.ts';
import { DEFAULT_MAX_CONCURRENT_COMPRESSIONS, DEFAULT_MAX_INPUT_PIXELS } from './limits.ts';

export interface CompressConfig {
  maxInputPixels: number;
  maxConcurrentCompressions: number;
}

export function compressConfig(env: Env): CompressConfig {
  return {
    maxInputPixels: integerVar('MAX_INPUT_PIXELS', env.MAX_INPUT_PIXELS, DEFAULT_MAX_INPUT_PIXELS),
    maxConcurrentCompressions: integerVar('MAX_CONCURRENT_COMPRESSIONS', env.MAX_CONCURRENT_COMPRESSIONS, DEFAULT_MAX_CONCURRENT_COMPRESSIONS),
  };
}
