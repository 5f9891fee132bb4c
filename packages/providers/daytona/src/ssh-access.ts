import type { SetupConnection } from '@sandcast/provider-sdk';

/** What Daytona answers when asked for SSH access to a sandbox. */
interface SshAccess {
  token: string;
  sshCommand: string;
  expiresAt: string | Date;
}

/**
 * The setup connection of a Daytona SSH access: Daytona puts the credential in the user name
 * (`ssh <token>@<host> [-p <port>]`), and the payload expires with the token.
 */
export function sshConnectionOf(access: SshAccess): Extract<SetupConnection, { type: 'ssh' }> {
  const words = access.sshCommand.trim().split(/\s+/);
  const target = words.find((w, i) => i > 0 && w.includes('@') && words[i - 1] !== '-p') ?? '';
  const at = target.lastIndexOf('@');
  const host = target.slice(at + 1);
  const portFlag = words.indexOf('-p');
  const port = portFlag >= 0 ? Number(words[portFlag + 1]) : 22;
  const expiresAt = new Date(access.expiresAt).toISOString();
  return {
    type: 'ssh',
    command: `ssh ${access.token}@${host}${port === 22 ? '' : ` -p ${port}`}`,
    host,
    port: Number.isInteger(port) ? port : 22,
    username: access.token,
    expiresAt,
  };
}
