import { SandcastClient } from '@sandcast/client';

/**
 * The one API client of the UI. It sends the session cookie (authenticated mode) and the CSRF
 * header that cookie-authenticated writes need; the API key itself never reaches browser storage.
 */
export function createBrowserClient(baseUrl: string = window.location.origin): SandcastClient {
  return new SandcastClient({ baseUrl, credentials: 'same-origin', csrfHeader: true });
}
