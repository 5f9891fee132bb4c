import { ProviderError, type ProviderErrorCode } from '@sandcast/provider-sdk';

export const PROVIDER_ID = 'local';

/** A ProviderError tagged with this provider's id. */
export function localError(code: ProviderErrorCode, message: string, cause?: unknown): ProviderError {
  return new ProviderError({ provider: PROVIDER_ID, code, message, cause, retryable: code === 'timeout' });
}
