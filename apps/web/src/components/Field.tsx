import type { ReactNode } from 'react';

/** The house text input and select. */
export const INPUT_CLASS =
  'w-full rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 text-sm text-zinc-100 placeholder:text-zinc-500';

/** A field's label. */
export const LABEL_CLASS = 'text-sm font-medium text-zinc-100';

/** The API's message for one field, under it (`id` is what the field's aria-describedby names). */
export function FieldError({ id, testId, message }: { id: string; testId: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p id={id} className="mt-1 text-xs text-red-300" data-testid={`field-error-${testId}`}>
      {message}
    </p>
  );
}

/** A label over its control (`htmlFor` is the control's id); hints and errors go in `children` after it. */
export function LabelledField({
  htmlFor,
  label,
  className,
  children,
}: {
  htmlFor: string;
  label: ReactNode;
  className?: string | undefined;
  children: ReactNode;
}) {
  return (
    <div className={className ? `space-y-1 ${className}` : 'space-y-1'}>
      <label htmlFor={htmlFor} className={LABEL_CLASS}>
        {label}
      </label>
      {children}
    </div>
  );
}
