import type { TerminalCloseReason } from '@sandcast/contracts';

/** Why a terminal closed, in the operator's words. */
export const CLOSE_REASON_WORDS: Record<TerminalCloseReason, string> = {
  expired: 'The setup session expired.',
  ssh_closed: 'The SSH connection to the setup sandbox closed.',
  setup_finished: 'Setup finished: the terminal closed when the image was captured.',
  setup_cancelled: 'The setup session was cancelled.',
  sandbox_ended: "The session's sandbox shell ended (it exited, or the sandbox stopped or was torn down).",
  server_shutdown: 'The Sandcast server shut down. Reconnect when it is back.',
};
