import type { Command } from 'commander';
import { registerPortClose } from './close.ts';
import { registerPortList } from './list.ts';
import { registerPortOpen } from './open.ts';
import { registerPortUrl } from './url.ts';

/** `sandcast sandbox port open|url|close|list`: a sandbox's ports as URLs. */
export function registerSandboxPort(sandbox: Command): void {
  const port = sandbox.command('port').description("serve a sandbox's ports as URLs");
  for (const register of [registerPortOpen, registerPortUrl, registerPortClose, registerPortList]) register(port);
}
