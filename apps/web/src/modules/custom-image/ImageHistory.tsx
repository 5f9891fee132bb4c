import type { CustomImageTemplateBody } from '@sandcast/contracts';
import { CopyableId } from '../../components/CopyButton.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { Time } from '../../components/time.tsx';
import { KIND_LABEL, NOT_USED_YET, templateTone } from './labels.ts';

/** Every image of the environment, newest first: active, superseded, revoked, failed. */
export function ImageHistory({ templates }: { templates: CustomImageTemplateBody[] }) {
  if (templates.length === 0) return null;
  return (
    <div>
      <h3 className="mb-2 text-sm font-semibold text-zinc-50">Image history</h3>
      <DataTable label="Image history" size="section" columns={['Status', 'Kind', 'Ref', 'Captured', 'Last used']}>
        {templates.map((t) => (
          <tr key={t.id}>
            <td className="px-3 py-1.5">
              <StatusBadge tone={templateTone(t.status)}>{t.status}</StatusBadge>
              {t.failureReason ? <span className="ml-2 text-xs text-red-300">{t.failureReason}</span> : null}
            </td>
            <td className="px-3 py-1.5 text-zinc-200">{KIND_LABEL[t.kind]}</td>
            <td className="max-w-[16rem] px-3 py-1.5">
              {t.providerRef ? <CopyableId value={t.providerRef} label={`Copy ref of image ${t.id}`} /> : '—'}
            </td>
            <td className="px-3 py-1.5 whitespace-nowrap text-zinc-300">
              <Time iso={t.capturedAt} relative />
            </td>
            <td className="px-3 py-1.5 whitespace-nowrap text-zinc-300">
              {t.lastUsedAt ? <Time iso={t.lastUsedAt} relative /> : <span className="text-zinc-400">{NOT_USED_YET}</span>}
            </td>
          </tr>
        ))}
      </DataTable>
    </div>
  );
}
