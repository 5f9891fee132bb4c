import { useMutation, useQueryClient } from '@tanstack/react-query';
import { KeyRound } from 'lucide-react';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { useClient } from '../api/client-context.tsx';
import { errorMessage } from '../api/errors.ts';
import { queryKeys } from '../api/query-keys.ts';
import { Button } from '../components/Button.tsx';
import { LabelledField } from '../components/Field.tsx';

/**
 * Authenticated mode: exchange an API key for an httpOnly session cookie. The key goes to the
 * server once and is not kept anywhere in the browser.
 */
export function LoginPage() {
  const client = useClient();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [apiKey, setApiKey] = useState('');
  const login = useMutation({
    mutationFn: (key: string) => client.auth.login(key),
    onSuccess: (session) => {
      setApiKey('');
      queryClient.setQueryData(queryKeys.authSession, session);
      void queryClient.invalidateQueries();
      navigate('/', { replace: true });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate(apiKey.trim());
  };
  return (
    <main className="flex min-h-full items-center justify-center p-4">
      <form
        onSubmit={submit}
        className="w-full max-w-sm space-y-4 rounded-lg border border-zinc-800 bg-zinc-900 p-6"
        aria-labelledby="login-title"
      >
        <div className="flex items-center gap-2">
          <img src="/favicon.svg" alt="" className="size-7" />
          <h1 id="login-title" className="text-lg font-semibold text-white">
            Log in to Sandcast
          </h1>
        </div>
        <p className="text-sm text-zinc-300">
          This instance requires an API key. A fresh instance writes its admin key to{' '}
          <code className="font-mono text-xs">&lt;data dir&gt;/admin-api-key</code>.
        </p>
        <LabelledField htmlFor="api-key" label="API key">
          <input
            id="api-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            required
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            className="w-full rounded-md border border-zinc-700 bg-zinc-950 px-3 py-2 font-mono text-sm text-zinc-100"
            placeholder="sc_…"
            aria-describedby={login.isError ? 'login-error' : undefined}
          />
        </LabelledField>
        {login.isError ? (
          <p id="login-error" role="alert" className="text-sm text-red-300">
            {errorMessage(login.error)}
          </p>
        ) : null}
        <Button
          type="submit"
          variant="primary"
          className="w-full justify-center"
          disabled={login.isPending || !apiKey.trim()}
          icon={<KeyRound aria-hidden className="size-4" />}
        >
          {login.isPending ? 'Logging in…' : 'Log in'}
        </Button>
      </form>
    </main>
  );
}
