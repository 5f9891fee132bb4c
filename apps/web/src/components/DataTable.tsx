import type { ReactNode } from 'react';

const SIZES = {
  /** A table that is the page's subject (the environments list). */
  page: { frame: 'rounded-lg', head: 'uppercase', cell: 'px-4 py-2' },
  /** A table inside a section (an environment's image history). */
  section: { frame: 'rounded-md', head: '', cell: 'px-3 py-1.5' },
} as const;

/**
 * The house table: a scrolling frame, a header row of `columns`, and the caller's body rows.
 * Cells do not wrap, so on a narrow screen the frame scrolls sideways instead of squeezing or
 * clipping the values.
 */
export function DataTable({
  label,
  columns,
  size,
  children,
}: {
  label: string;
  columns: string[];
  size: keyof typeof SIZES;
  children: ReactNode;
}) {
  const style = SIZES[size];
  return (
    <div className={`overflow-x-auto border border-zinc-800 ${style.frame}`}>
      <table className="w-full text-left text-sm whitespace-nowrap" aria-label={label}>
        <thead className={`bg-zinc-900 text-xs text-zinc-400 ${style.head}`}>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col" className={`${style.cell} font-medium`}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-800">{children}</tbody>
      </table>
    </div>
  );
}
