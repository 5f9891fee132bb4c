/** Why the bridge refused its own configuration. Closed. */
export const BRIDGE_CONFIG_ERROR_CODES = ['invalid_budgets', 'invalid_limits'] as const;
export type BridgeConfigErrorCode = (typeof BRIDGE_CONFIG_ERROR_CODES)[number];

/** A bridge configured against its own rules; thrown at construction, never at run time. */
export class BridgeConfigError extends Error {
  readonly code: BridgeConfigErrorCode;
  constructor(code: BridgeConfigErrorCode, message: string) {
    super(message);
    this.name = 'BridgeConfigError';
    this.code = code;
  }
}

/**
 * The nested time budgets of one request: the forwarder is aborted after `forwardMs`, the host
 * answers within `responseMs` whatever the forwarder does, and the gateway gives up on an answer
 * after `gatewayWaitMs` (the host passes that one to the gateway).
 */
export interface BridgeBudgets {
  forwardMs: number;
  responseMs: number;
  gatewayWaitMs: number;
}

export const DEFAULT_BUDGETS: BridgeBudgets = { forwardMs: 30_000, responseMs: 32_000, gatewayWaitMs: 35_000 };

/** Throws `invalid_budgets` unless 0 < forward < response < gateway wait. */
export function checkBudgets(budgets: BridgeBudgets): BridgeBudgets {
  const { forwardMs, responseMs, gatewayWaitMs } = budgets;
  const finite = [forwardMs, responseMs, gatewayWaitMs].every((ms) => Number.isFinite(ms) && ms > 0);
  if (!finite || !(forwardMs < responseMs && responseMs < gatewayWaitMs)) {
    throw new BridgeConfigError(
      'invalid_budgets',
      `bridge budgets must nest as 0 < forwardMs < responseMs < gatewayWaitMs, got ${forwardMs} / ${responseMs} / ${gatewayWaitMs}`,
    );
  }
  return { forwardMs, responseMs, gatewayWaitMs };
}

export function checkPositiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0)
    throw new BridgeConfigError('invalid_limits', `${name} must be a positive integer, got ${value}`);
  return value;
}
