import { Children, cloneElement, isValidElement, type ReactElement, type ReactNode } from 'react';

const SIZES = {
  /** A table that is the page's subject (the environments list). */
  page: { frame: 'rounded-lg', head: 'uppercase', cell: 'px-4 py-2' },
  /** A table inside a section (an environment's image history). */
  section: { frame: 'rounded-md', head: '', cell: 'px-3 py-1.5' },
} as const;

type Cell = ReactElement<{ 'data-label'?: string; children?: ReactNode }>;

/** Gives every cell its column's name, which a phone-sized screen shows beside the value (index.css). */
function labelCells(rows: ReactNode, columns: string[]): ReactNode {
  return Children.map(rows, (row) => {
    if (!isValidElement<{ children?: ReactNode }>(row)) return row;
    let index = 0;
    const cells = Children.map(row.props.children, (cell) =>
      isValidElement(cell) ? cloneElement(cell as Cell, { 'data-label': columns[index++] }) : cell,
    );
    return cloneElement(row, {}, cells);
  });
}

/**
 * The house table: a scrolling frame, a header row of `columns`, and the caller's body rows.
 * Cells do not wrap; below 640 px each row stacks into "column: value" lines
 * (index.css), so nothing is cut at the screen's edge.
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
      <table className="data-table w-full text-left text-sm whitespace-nowrap" aria-label={label}>
        <thead className={`bg-zinc-900 text-xs text-zinc-400 ${style.head}`}>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col" className={`${style.cell} font-medium`}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-800">{labelCells(children, columns)}</tbody>
      </table>
    </div>
  );
}
