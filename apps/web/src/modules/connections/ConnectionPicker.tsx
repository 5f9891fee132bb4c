import type { ConnectionBody } from '@sandcast/contracts';
import { Link } from 'react-router';
import { LabelledField } from '../../components/Field.tsx';

/** The connection an environment of a connected provider runs in; none yet says where to make one. */
export function ConnectionPicker({
  provider,
  connections,
  value,
  onChange,
  error,
}: {
  provider: string;
  connections: ConnectionBody[];
  value: string;
  onChange: (connectionId: string) => void;
  error?: string | null | undefined;
}) {
  const mine = connections.filter((c) => c.provider === provider);
  if (mine.length === 0) {
    return (
      <p className="text-sm text-zinc-300" data-testid="no-connection">
        This provider needs a connection and there is none yet.{' '}
        <Link to="/settings/connections" className="text-teal-300 underline">
          Create one under Settings → Connections
        </Link>
        .
      </p>
    );
  }
  return (
    <LabelledField htmlFor="env-connection" label="Connection" className="max-w-sm">
      <select
        id="env-connection"
        value={value}
        aria-invalid={error ? true : undefined}
        onChange={(e) => onChange(e.target.value)}
        className="w-full rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 text-sm text-zinc-100"
      >
        <option value="">Choose a connection…</option>
        {mine.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name}
          </option>
        ))}
      </select>
      {error ? (
        <p className="text-xs text-red-300" data-testid="connection-error">
          {error}
        </p>
      ) : null}
    </LabelledField>
  );
}
