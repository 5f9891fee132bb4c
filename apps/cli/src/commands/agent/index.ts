import type { Command } from 'commander';
import { registerAgentArchive } from './archive.ts';
import { registerAgentCreate } from './create.ts';
import { registerAgentList } from './list.ts';
import { registerAgentShow } from './show.ts';
import { registerAgentUpdate } from './update.ts';

export function registerAgent(program: Command): void {
  const agent = program.command('agent').description('manage agents: named sandbox policies that bind exact environment revisions');
  for (const register of [registerAgentList, registerAgentCreate, registerAgentShow, registerAgentUpdate, registerAgentArchive])
    register(agent);
}
