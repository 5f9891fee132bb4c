import { Daytona, DaytonaError } from '@daytonaio/sdk';
import { ProviderError, type ProviderErrorCode } from '@sandcast/provider-sdk';
import type { DaytonaConnectionSettings } from './config.ts';

export const PROVIDER_ID = 'daytona';

/** A Daytona client for one connection. Polls for state instead of holding an event socket open. */
export function daytonaClient(settings: DaytonaConnectionSettings): Daytona {
  return new Daytona({
    apiKey: settings.apiKey,
    apiUrl: settings.apiUrl,
    ...(settings.target ? { target: settings.target } : {}),
    useDeprecatedPolling: true,
    requestTimeoutMs: 120_000,
  });
}

/** The HTTP status a Daytona SDK error carries, when it came from an answer. */
function statusOf(error: unknown): number | undefined {
  return error instanceof DaytonaError ? error.statusCode : undefined;
}

export const isNotFound = (error: unknown): boolean => statusOf(error) === 404;

/** Why Daytona refused or could not be reached, in words an operator can act on. */
export function reasonOf(error: unknown, apiUrl: string): string {
  const status = statusOf(error);
  if (status === 401)
    return `Daytona at ${apiUrl} refused the API key (401); create a new key in the Daytona dashboard and update the connection`;
  if (status === 403) return `the API key is not allowed to manage sandboxes at ${apiUrl} (403); give the key the sandbox permissions`;
  if (status === undefined && !(error instanceof DaytonaError && error.message))
    return `Daytona at ${apiUrl} could not be reached: ${(error as Error).message}; check the API URL and the network`;
  if (status === undefined) return `Daytona at ${apiUrl} could not be reached: ${(error as Error).message}; check the API URL`;
  return `Daytona at ${apiUrl} answered ${status}: ${(error as Error).message}`;
}

/**
 * Every SDK failure leaves the package as a ProviderError: the vendor's types stay inside, and so
 * does the vendor's error object (it is not kept as `cause`: nothing of a request, its headers
 * included, can reach a log through it).
 */
export function toProviderError(error: unknown, what: string, apiUrl: string): ProviderError {
  if (error instanceof ProviderError) return error;
  const status = statusOf(error);
  const code: ProviderErrorCode =
    status === 404
      ? 'not_found'
      : status === 401 || status === 403 || status === undefined
        ? 'unavailable'
        : status === 400 || status === 422
          ? 'invalid_config'
          : status === 408 || status === 504
            ? 'timeout'
            : 'backend';
  const message = status === 404 ? `${what}: Daytona has no such resource any more` : `${what}: ${reasonOf(error, apiUrl)}`;
  return new ProviderError({ provider: PROVIDER_ID, code, message, retryable: code === 'unavailable' || code === 'timeout' });
}

/** Quotes one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
