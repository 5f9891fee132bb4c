import { describe, expect, it } from 'vitest';
import { DEFAULT_IMAGE_IMPORT_MAX_BYTES, loadConfig } from './config.ts';

const base = { SANDCAST_DATA_DIR: '/tmp/sandcast-config-test' };

describe('loadConfig: allowed hosts and public URL', () => {
  it('are empty by default', () => {
    expect(loadConfig(base)).toMatchObject({ allowedHosts: [], publicUrl: null });
  });

  it('reads a comma list and the public URL as an origin in authenticated mode', () => {
    const config = loadConfig({
      ...base,
      SANDCAST_DEPLOYMENT_MODE: 'authenticated',
      SANDCAST_ALLOWED_HOSTS: ' sandcast.example.com, *.corp.example ,box:8443,[::1]',
      SANDCAST_PUBLIC_URL: 'https://sandcast.example.com/ui/',
    });
    expect(config.allowedHosts).toEqual(['sandcast.example.com', '*.corp.example', 'box:8443', '[::1]']);
    expect(config.publicUrl).toBe('https://sandcast.example.com');
  });

  it('refuses malformed entries and non-http URLs, saying what is expected', () => {
    const authenticated = { ...base, SANDCAST_DEPLOYMENT_MODE: 'authenticated' };
    expect(() => loadConfig({ ...authenticated, SANDCAST_ALLOWED_HOSTS: 'http://x.example' })).toThrow(/host names, optionally with :port/);
    expect(() => loadConfig({ ...authenticated, SANDCAST_ALLOWED_HOSTS: 'a@b' })).toThrow(/SANDCAST_ALLOWED_HOSTS/);
    expect(() => loadConfig({ ...authenticated, SANDCAST_PUBLIC_URL: 'not a url' })).toThrow(/must be a URL/);
    expect(() => loadConfig({ ...authenticated, SANDCAST_PUBLIC_URL: 'ftp://x.example' })).toThrow(/http\(s\)/);
  });

  it('refuses both in local_trusted mode, where only loopback names are answered', () => {
    expect(() => loadConfig({ ...base, SANDCAST_ALLOWED_HOSTS: 'sandcast.example.com' })).toThrow(/authenticated mode only/);
    expect(() => loadConfig({ ...base, SANDCAST_PUBLIC_URL: 'https://sandcast.example.com' })).toThrow(/authenticated mode only/);
  });
});

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
