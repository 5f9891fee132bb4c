import type { SandcastClient } from '@sandcast/client';
import { createContext, type ReactNode, useContext } from 'react';

const ClientContext = createContext<SandcastClient | null>(null);

/** Hands the API client to every screen (tests pass one pointed at a fake fetch). */
export function ClientProvider({ client, children }: { client: SandcastClient; children: ReactNode }) {
  return <ClientContext.Provider value={client}>{children}</ClientContext.Provider>;
}

export function useClient(): SandcastClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('useClient needs a <ClientProvider>');
  return client;
}
