// The compression vars of wrangler.toml, read with their defaults.
import { integerVar, type Env } from '../env.ts';
import { DEFAULT_MAX_INPUT_PIXELS, DEFAULT_MEMORY_BUDGET_MB, DEFAULT_UPLOAD_READ_TIMEOUT_MS } from './limits.ts';

export interface CompressConfig {
  maxInputPixels: number;
  /** Bytes the isolate gives compressions at once (MEMORY_BUDGET_MB). */
  memoryBudget: number;
  /** Ms an upload's body may take to arrive (UPLOAD_READ_TIMEOUT_MS). */
  uploadReadTimeoutMs: number;
  /** HEIC_INPUT=on: HEIC/HEIF uploads are read (HEVC patents are the operator's question: docs/operations.md). */
  heicInput: boolean;
}

export function compressConfig(env: Env): CompressConfig {
  return {
    maxInputPixels: integerVar('MAX_INPUT_PIXELS', env.MAX_INPUT_PIXELS, DEFAULT_MAX_INPUT_PIXELS),
    memoryBudget: integerVar('MEMORY_BUDGET_MB', env.MEMORY_BUDGET_MB, DEFAULT_MEMORY_BUDGET_MB) * 1024 * 1024,
    uploadReadTimeoutMs: integerVar(
      'UPLOAD_READ_TIMEOUT_MS',
      env.UPLOAD_READ_TIMEOUT_MS,
      DEFAULT_UPLOAD_READ_TIMEOUT_MS,
    ),
    heicInput:
      String(env.HEIC_INPUT ?? '')
        .trim()
        .toLowerCase() === 'on',
  };
}
