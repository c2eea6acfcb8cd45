import type { ConcurrencyController } from '../aimd'
import { SeedAimd } from '../aimd'
import type { AimdParams } from '../types'
import { AdaptiveController } from './adaptive'

/** The concurrency controllers a partition can run: the seed memo's AIMD, and the adaptive one. */
export const CONTROLLER_KINDS = ['seed', 'adaptive'] as const

export type ControllerKind = (typeof CONTROLLER_KINDS)[number]

/**
 * What the Scheduler's `createController` option takes, for a controller named by the CLI
 * (`--controller seed|adaptive`) or a setting. Throws a TypeError naming an unknown kind.
 */
export function controllerFactory(
  kind: ControllerKind,
): (partition: string, params: AimdParams) => ConcurrencyController {
  switch (kind) {
    case 'seed':
      return (partition, params) => new SeedAimd(partition, params)
    case 'adaptive':
      return (partition, params) => new AdaptiveController(partition, params)
    default:
      throw new TypeError(
        `Expected \`controller\` to be one of ${CONTROLLER_KINDS.join(', ')}, got \`${String(kind)}\``,
      )
  }
}
