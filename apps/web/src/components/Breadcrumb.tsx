import { Link } from 'react-router';

/** The trail above a page title: a link to the list the page belongs to. */
export function Breadcrumb({ to, label }: { to: string; label: string }) {
  return (
    <p className="text-sm text-zinc-400">
      <Link to={to} className="hover:text-zinc-200">
        {label}
      </Link>{' '}
      /
    </p>
  );
}
