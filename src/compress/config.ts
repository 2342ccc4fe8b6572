// The compression vars of wrangler.toml, read with their defaults.
import { integerVar, type Env } from '../env.ts';
import { DEFAULT_MAX_INPUT_PIXELS, DEFAULT_MEMORY_BUDGET_MB } from './limits.ts';

export interface CompressConfig {
  maxInputPixels: number;
  /** Bytes the isolate gives compressions at once (MEMORY_BUDGET_MB). */
  memoryBudget: number;
}

export function compressConfig(env: Env): CompressConfig {
  return {
    maxInputPixels: integerVar('MAX_INPUT_PIXELS', env.MAX_INPUT_PIXELS, DEFAULT_MAX_INPUT_PIXELS),
    memoryBudget: integerVar('MEMORY_BUDGET_MB', env.MEMORY_BUDGET_MB, DEFAULT_MEMORY_BUDGET_MB) * 1024 * 1024,
  };
}
