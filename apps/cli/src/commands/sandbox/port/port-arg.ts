import { PortNumberSchema } from '@sandcast/contracts';
import { UsageError } from '../../../format.ts';

/** A port argument: a whole number from 1 to 65535. */
export function portArg(value: string): number {
  const parsed = PortNumberSchema.safeParse(/^\d+$/.test(value) ? Number(value) : Number.NaN);
  if (!parsed.success) throw new UsageError(`the port must be a whole number from 1 to 65535, got "${value}"`);
  return parsed.data;
}
