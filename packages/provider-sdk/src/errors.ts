export const PROVIDER_ERROR_CODES = [
  /** The backend cannot be reached or is not installed. */
  'unavailable',
  /** The instance, lease or template does not exist (any more). */
  'not_found',
  /** The config passed the schema but the backend refused it (an unknown image, say). */
  'invalid_config',
  /** The operation is not offered by this provider (its capability flag is false). */
  'unsupported',
  /** A capture did not produce a usable template. */
  'capture_failed',
  /** The backend did not answer in time. */
  'timeout',
  /** The artefact is still in use (a template a sandbox runs from, say). */
  'in_use',
  /** The instance exists but no longer runs (it exited, or was stopped for passing a limit); recreate it. */
  'not_running',
  /** Anything else the backend reported. */
  'backend',
  /** Input the caller supplied is malformed or unsafe (an image archive that escapes its directory, say). */
  'invalid_input',
  /** Input the caller supplied is over a configured size limit (an image import past its cap). */
  'too_large',
] as const;
export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

/**
 * An infrastructure fault. Expected outcomes (a command exiting 1) are values, never this.
 * The message says what to do next; the server shows it to the operator.
 */
export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  readonly provider: string;
  readonly retryable: boolean;

  constructor(options: { provider: string; code: ProviderErrorCode; message: string; retryable?: boolean; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderError';
    this.code = options.code;
    this.provider = options.provider;
    this.retryable = options.retryable ?? false;
  }
}

export function isProviderError(value: unknown): value is ProviderError {
  return value instanceof ProviderError;
}
