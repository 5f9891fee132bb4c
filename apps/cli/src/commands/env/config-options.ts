import { Option } from 'commander';
import { collect, UsageError } from '../../format.ts';

export const configOption = () => new Option('--config <json>', 'the whole provider config as a JSON object');
export const setOption = () =>
  new Option('--set <key=value>', 'set one config field (repeatable; dotted keys for nested fields)').argParser(collect);

export function parseConfigJson(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new UsageError(`--config must be a JSON object: ${(error as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('--config must be a JSON object');
  return value as Record<string, unknown>;
}
