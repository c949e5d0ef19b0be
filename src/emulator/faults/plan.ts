/** A fault plan: its seed and its rules (JSON objects or CLI specs), checked into canonical form. */
import { checkFaultRule, planParts, type FaultRule } from './schema';
import { parseFaultSpec } from './spec';

/** A fault plan. A string rule is a CLI spec, read by {@link parseFaultSpec}. */
export interface FaultPlan {
  /** Seed of the PRNG of `share` rules (default 1). */
  seed?: number;
  rules: ReadonlyArray<FaultRule | string>;
}

/**
 * Checks a whole plan (library option, or the body of `POST /__emulator/faults`).
 * @returns the plan with every rule in canonical form (strings parsed) and its seed (default 1).
 * @throws TypeError naming the rule and the problem (`fault rule <index>: …`, `fault spec "…": …`), or for a plan that
 *   is not `{seed?, rules: […]}` (`fault plan: …`).
 */
export function checkFaultPlan(raw: unknown): { seed: number; rules: FaultRule[] } {
  const { seed, rules } = planParts(raw);
  return {
    seed,
    rules: rules.map((r, i) => (typeof r === 'string' ? parseFaultSpec(r) : checkFaultRule(r, `fault rule ${i}`))),
  };
}
