import type { ReactNode } from 'react';
import { Link } from 'react-router';

/** A link that reads as the page's primary action ("Create environment"). */
export function LinkButton({ to, icon, children }: { to: string; icon?: ReactNode; children: ReactNode }) {
  return (
    <Link
      to={to}
      className="inline-flex items-center gap-1.5 rounded-md border border-teal-600 bg-teal-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-teal-600"
    >
      {icon}
      {children}
    </Link>
  );
}
