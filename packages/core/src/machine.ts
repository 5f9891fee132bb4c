import { SandcastError } from './errors.ts';

/**
 * A state machine as data: every status, and for each the statuses it may move to. The
 * repositories derive their compare-and-set guards from it (`sourcesOf`), so the table is the
 * only gate a status change passes.
 */
export interface Machine<S extends string> {
  /** The machine's name in messages ("setup session"). */
  readonly name: string;
  readonly statuses: readonly S[];
  /** Whether `from → to` is an edge of the table. */
  can(from: S, to: S): boolean;
  /** Returns `to` when `from → to` is an edge, else throws InvalidTransition (with `hint` as what to do). */
  transition(from: S, to: S, hint?: string): S;
  /** Every status from which `to` is reachable in one step (the `WHERE status IN (…)` of a write). */
  sourcesOf(to: S): S[];
  /** Every edge of the table, for tests and documentation. */
  edges(): Array<readonly [S, S]>;
}

/** A status change the machine's table does not allow. A 409: reload the resource and act on its state. */
export class InvalidTransition extends SandcastError {
  readonly machine: string;
  readonly from: string;
  readonly to: string;

  constructor(machine: string, from: string, to: string, hint = 'reload it and act on its current state') {
    super('invalid_transition', `the ${machine} is ${from} and cannot become ${to}; ${hint}`, {
      machine,
      from,
      to,
    });
    this.name = 'InvalidTransition';
    this.machine = machine;
    this.from = from;
    this.to = to;
  }
}

export function defineMachine<S extends string>(name: string, statuses: readonly S[], table: Record<S, readonly S[]>): Machine<S> {
  const can = (from: S, to: S) => table[from].includes(to);
  return {
    name,
    statuses,
    can,
    transition(from, to, hint) {
      if (!can(from, to)) throw new InvalidTransition(name, from, to, hint);
      return to;
    },
    sourcesOf: (to) => statuses.filter((from) => can(from, to)),
    edges: () => statuses.flatMap((from) => table[from].map((to) => [from, to] as const)),
  };
}
