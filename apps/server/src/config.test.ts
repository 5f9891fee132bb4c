import { describe, expect, it } from 'vitest';
import { DEFAULT_IMAGE_IMPORT_MAX_BYTES, loadConfig } from './config.ts';

describe('SANDCAST_IMAGE_IMPORT_MAX_BYTES', () => {
  it('defaults to 8 GiB and reads bytes, with K/M/G/T suffixes', () => {
    expect(loadConfig({}).imageImportMaxBytes).toBe(DEFAULT_IMAGE_IMPORT_MAX_BYTES);
    expect(DEFAULT_IMAGE_IMPORT_MAX_BYTES).toBe(8 * 1024 ** 3);
    expect(loadConfig({ SANDCAST_IMAGE_IMPORT_MAX_BYTES: '1048576' }).imageImportMaxBytes).toBe(1024 ** 2);
    expect(loadConfig({ SANDCAST_IMAGE_IMPORT_MAX_BYTES: '512M' }).imageImportMaxBytes).toBe(512 * 1024 ** 2);
    expect(loadConfig({ SANDCAST_IMAGE_IMPORT_MAX_BYTES: '16GiB' }).imageImportMaxBytes).toBe(16 * 1024 ** 3);
    expect(loadConfig({ SANDCAST_IMAGE_IMPORT_MAX_BYTES: '2t' }).imageImportMaxBytes).toBe(2 * 1024 ** 4);
  });

  it('refuses what is not a positive size, saying what to set', () => {
    for (const bad of ['0', '-1', 'lots', '1.5G', '8X', '1\u00008', '9'.repeat(30)]) {
      expect(() => loadConfig({ SANDCAST_IMAGE_IMPORT_MAX_BYTES: bad }), bad).toThrow(
        /SANDCAST_IMAGE_IMPORT_MAX_BYTES must be a positive number of bytes/,
      );
    }
  });
});
