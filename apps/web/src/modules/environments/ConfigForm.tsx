import { useId } from 'react';
import { INPUT_CLASS as INPUT } from '../../components/Field.tsx';
import { fieldHint, fieldKind, fieldLabel, isSecretPlaceholder, type JsonSchema } from './json-schema.ts';

type Config = Record<string, unknown>;

function setKey(config: Config, key: string, value: unknown): Config {
  const next = { ...config };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

/**
 * The provider's config as a form, generated from its JSON Schema. Secret fields are password
 * inputs that never show the stored value: the API answers `{"secret":true,"set":true}`, and
 * sending that placeholder back keeps what is stored.
 */
export function ConfigForm({
  schema,
  value,
  onChange,
  idPrefix = 'config',
  errors = {},
}: {
  schema: JsonSchema;
  value: Config;
  onChange: (next: Config) => void;
  idPrefix?: string;
  /** Messages by field path ("image", "resources.cpu"), shown at their field. */
  errors?: Record<string, string>;
}) {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return <p className="text-sm text-zinc-400">This provider has no settings.</p>;
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      {properties.map(([name, field]) => (
        <Field
          key={name}
          name={name}
          schema={field}
          required={schema.required?.includes(name) ?? false}
          value={value[name]}
          onChange={(v) => onChange(setKey(value, name, v))}
          idPrefix={idPrefix}
          error={errors[name]}
          nestedErrors={nested(errors, name)}
        />
      ))}
    </div>
  );
}

/** The messages under `name.`, with that prefix taken off. */
function nested(errors: Record<string, string>, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, message] of Object.entries(errors)) if (path.startsWith(`${name}.`)) out[path.slice(name.length + 1)] = message;
  return out;
}

/** The app's own check before sending: required fields left empty, with the field's hint as the fix. */
export function missingRequired(schema: JsonSchema, value: Config): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of schema.required ?? []) {
    const field = schema.properties?.[name];
    if (!field || field.default !== undefined) continue;
    const v = value[name];
    if (v === undefined || v === '') {
      out[name] = `Required${field.description ? ` — ${field.description}` : ''}`;
    }
  }
  return out;
}

function Field({
  name,
  schema,
  required,
  value,
  onChange,
  idPrefix,
  error,
  nestedErrors,
}: {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  onChange: (v: unknown) => void;
  idPrefix: string;
  error: string | undefined;
  nestedErrors: Record<string, string>;
}) {
  const id = `${idPrefix}-${name}-${useId()}`;
  const kind = fieldKind(schema);
  const label = fieldLabel(name, schema);
  const hint = fieldHint(schema);
  const labelEl = (
    <label htmlFor={id} className="text-sm font-medium text-zinc-100">
      {label}
      {required ? <span className="text-zinc-400"> (required)</span> : null}
    </label>
  );
  const hintEl = hint ? (
    <p id={`${id}-hint`} className="text-xs text-zinc-400">
      {hint}
    </p>
  ) : null;
  const errorEl = error ? (
    <p id={`${id}-error`} className="text-xs text-red-300" data-testid={`field-error-${name}`}>
      {error}
    </p>
  ) : null;
  const describedBy = [error ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean).join(' ') || undefined;
  const invalid = error ? true : undefined;

  switch (kind) {
    case 'object':
      return (
        <fieldset className="space-y-3 rounded-md border border-zinc-800 p-3 sm:col-span-2">
          <legend className="px-1 text-sm font-medium text-zinc-100">{label}</legend>
          <ConfigForm
            schema={schema}
            value={(value as Config | undefined) ?? {}}
            onChange={(next) => onChange(Object.keys(next).length ? next : undefined)}
            idPrefix={`${idPrefix}-${name}`}
            errors={nestedErrors}
          />
          {errorEl}
        </fieldset>
      );
    case 'boolean':
      return (
        <div className="flex items-center gap-2">
          <input
            id={id}
            type="checkbox"
            checked={value === true}
            onChange={(e) => onChange(e.target.checked)}
            aria-describedby={describedBy}
            aria-invalid={invalid}
          />
          {labelEl}
          {hintEl}
          {errorEl}
        </div>
      );
    case 'enum':
      return (
        <div className="space-y-1">
          {labelEl}
          <select
            id={id}
            className={INPUT}
            value={value === undefined ? '' : String(value)}
            onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
            aria-describedby={describedBy}
            aria-invalid={invalid}
          >
            <option value="">{schema.default !== undefined ? `Default (${String(schema.default)})` : 'Not set'}</option>
            {schema.enum!.map((option) => (
              <option key={String(option)} value={String(option)}>
                {String(option)}
              </option>
            ))}
          </select>
          {errorEl}
          {hintEl}
        </div>
      );
    case 'number':
    case 'integer':
      return (
        <div className="space-y-1">
          {labelEl}
          <input
            id={id}
            type="number"
            inputMode={kind === 'integer' ? 'numeric' : 'decimal'}
            step={kind === 'integer' ? 1 : 'any'}
            className={INPUT}
            value={typeof value === 'number' ? value : ''}
            onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
            aria-describedby={describedBy}
            aria-invalid={invalid}
          />
          {errorEl}
          {hintEl}
        </div>
      );
    case 'secret': {
      const stored = isSecretPlaceholder(value) && value.set;
      return (
        <div className="space-y-1">
          {labelEl}
          <input
            id={id}
            type="password"
            autoComplete="new-password"
            className={INPUT}
            value={typeof value === 'string' ? value : ''}
            placeholder={stored ? 'Stored — leave empty to keep it' : 'Not set'}
            onChange={(e) => onChange(e.target.value === '' ? (stored ? { secret: true, set: true } : undefined) : e.target.value)}
            aria-describedby={`${id}-secret`}
            aria-invalid={invalid}
          />
          {errorEl}
          <p id={`${id}-secret`} className="text-xs text-zinc-400">
            {stored
              ? 'A value is stored, encrypted. It is never shown; type a new one to replace it.'
              : 'Stored encrypted; never shown again.'}
          </p>
        </div>
      );
    }
    case 'string-map':
      return (
        <div className="space-y-1 sm:col-span-2">
          {labelEl}
          <CodeArea
            id={id}
            describedBy={describedBy}
            invalid={invalid}
            placeholder="NAME=value, one per line"
            initial={Object.entries((value as Record<string, string> | undefined) ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join('\n')}
            onText={(text) => {
              const entries = text
                .split('\n')
                .map((line) => line.trim())
                .filter(Boolean)
                .map(
                  (line) =>
                    [
                      line.slice(0, line.indexOf('=') < 0 ? line.length : line.indexOf('=')),
                      line.includes('=') ? line.slice(line.indexOf('=') + 1) : '',
                    ] as const,
                );
              onChange(entries.length ? Object.fromEntries(entries) : undefined);
            }}
          />
          {errorEl}
          {hintEl}
        </div>
      );
    case 'json':
      return (
        <div className="space-y-1 sm:col-span-2">
          {labelEl}
          <CodeArea
            id={id}
            describedBy={describedBy}
            invalid={invalid}
            initial={value === undefined ? '' : JSON.stringify(value, null, 2)}
            onText={(text) => {
              try {
                onChange(text.trim() === '' ? undefined : JSON.parse(text));
              } catch {
                // keep the last valid value until the JSON parses
              }
            }}
          />
          {errorEl}
          {hintEl}
        </div>
      );
    default:
      return (
        <div className="space-y-1">
          {labelEl}
          <input
            id={id}
            type="text"
            spellCheck={false}
            className={`${INPUT} font-mono`}
            value={typeof value === 'string' ? value : ''}
            placeholder={schema.default !== undefined ? String(schema.default) : undefined}
            onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
            aria-describedby={describedBy}
            aria-invalid={invalid}
            aria-required={required || undefined}
          />
          {errorEl}
          {hintEl}
        </div>
      );
  }
}

/** A monospace text area for structured values (NAME=value lines, JSON), uncontrolled. */
function CodeArea(props: {
  id: string;
  describedBy: string | undefined;
  invalid?: boolean;
  initial: string;
  placeholder?: string;
  onText: (text: string) => void;
}) {
  return (
    <textarea
      id={props.id}
      rows={3}
      className={`${INPUT} font-mono`}
      placeholder={props.placeholder}
      defaultValue={props.initial}
      onChange={(e) => props.onText(e.target.value)}
      aria-describedby={props.describedBy}
      aria-invalid={props.invalid}
    />
  );
}
