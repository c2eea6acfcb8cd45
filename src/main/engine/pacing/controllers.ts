import { ControllerKind } from '../../../shared/contract'
import type { ControllerFactory } from './aimd'
import { SeedAimd } from './aimd'
import { AdaptiveController } from './adaptive'

/** The concurrency controllers a partition can run (the contract's list): seed, adaptive. */
export const CONTROLLER_KINDS: readonly ControllerKind[] = ControllerKind.options

export type { ControllerKind }

/** The controller a scheduler runs when nothing names one. */
export const DEFAULT_CONTROLLER: ControllerKind = 'adaptive'

/**
 * What the Scheduler's `createController` option takes, for a controller named by the CLI
 * (`--controller seed|adaptive`) or a setting. Throws a TypeError naming an unknown kind.
 */
export function controllerFactory(kind: ControllerKind): ControllerFactory {
  switch (kind) {
    case 'seed':
      return (partition, params, limit) => new SeedAimd(partition, params, limit)
    case 'adaptive':
      return (partition, params, limit) => new AdaptiveController(partition, params, { limit })
    default:
      throw new TypeError(
        `Expected \`controller\` to be one of ${CONTROLLER_KINDS.join(', ')}, got \`${String(kind)}\``,
      )
  }
}
