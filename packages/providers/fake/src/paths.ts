import path from 'node:path';
import { ProviderError } from '@sandcast/provider-sdk';

/** Maps an absolute in-sandbox path onto the instance's root directory, refusing escapes. */
export function hostPath(root: string, sandboxPath: string): string {
  if (!sandboxPath.startsWith('/')) {
    throw new ProviderError({
      provider: 'fake',
      code: 'invalid_config',
      message: `path must be absolute inside the sandbox: ${sandboxPath}`,
    });
  }
  const resolved = path.resolve(root, `.${path.posix.normalize(sandboxPath)}`);
  if (resolved !== root && !resolved.startsWith(`${root}${path.sep}`)) {
    throw new ProviderError({ provider: 'fake', code: 'invalid_config', message: `path escapes the sandbox: ${sandboxPath}` });
  }
  return resolved;
}
