// The team's spend caps as `pacer budgets --store` sets them: a new cap starts from what the team
// ledger says its scope spent in the current period (so a daily cap set at noon counts the
// morning), a changed one keeps the spend the team settled (team/caps.ts).
import type { SpendCapInput } from '../../../shared/contract/spend'
import { periodRange } from '../pacing/spend-periods'
import type { TeamStore } from '../team/connect'
import { teamSpend } from '../team/ledger/team-read'
import { parseCapInput } from './budgets'

/** Adds a team cap, or changes the amount of the one of the same scope; returns its id. */
export async function setTeamCap(
  team: Pick<TeamStore, 'caps' | 'ledger'>,
  input: SpendCapInput & { period: NonNullable<SpendCapInput['period']> },
  now = Date.now(),
): Promise<number> {
  const { scope, capMicros } = parseCapInput(input)
  const { start, end } = periodRange(now, scope.period, scope.zone)
  const spent = await teamSpend(team.ledger, { start, end, ...scope })
  return team.caps.set(scope, capMicros, spent)
}
