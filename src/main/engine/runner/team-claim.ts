// Team mode's claim gate, around the local claim: a task is executed only under a claim of the
// team's store (claims-redis.ts), so each distinct task runs once across every machine on it.
// The local claim (this database) stays what the journal, the ledger and the results hang on:
// its epoch is the runner's. The team's result is stored locally before a task uses it, so a
// task always points at a result of its own database.
import { ENTRY_STATES } from './durable/journal'
import type { QueuedTask } from '../queue/queue'
import type { ClaimAttempt, Provider, StoredResult, TeamClaimStore, Usage } from '../core/types'
import { ANSWER_LOST } from './call'
import { throwIfAborted, type Active, type Finish, type RunContext } from './context'
import { executeOwned, reuse, waitWithoutSlot } from './claim-steps'
import type { Execution } from './execute'
import { ledgerRow, recordAbandoned } from './ledger-rows'

/** Takes the team's claim, then the local one; or adopts the team's result; or waits for it. */
export async function processTeamTask(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  team: TeamClaimStore,
): Promise<Finish> {
  const { task } = active
  const { workerId, leaseMs } = ctx.o
  const signal = active.controller.signal
  // After a fenced completion the winner's result is ours too, but nothing was saved by it.
  let fenced = false
  try {
    for (;;) {
      throwIfAborted(active)
      // Waits while the team store is out of reach or being re-seeded: no claim, no call.
      let attempt: ClaimAttempt = await team.claim(task.fp, workerId, leaseMs, { signal })
      if (attempt.kind === 'busy') {
        // Another machine (or task) runs it: wait without holding a slot.
        const waited = await waitWithoutSlot(ctx, active, team)
        if (waited.kind === 'released' || waited.kind === 'wait_timeout') continue
        attempt = waited
      }
      if (attempt.kind === 'completed' && (await forgotOlderFailure(ctx, active, attempt.result))) {
        continue
      }
      if (attempt.kind === 'owned') active.team = attempt.epoch
      const teams = attempt.kind === 'completed' ? attempt : null
      const outcome = await local(ctx, active, provider, fenced, teams)
      if (outcome.status !== 'fenced') return outcome
      fenced = true
    }
  } finally {
    // Whatever ended the task without completing its team claim gives it back.
    const epoch = active.team
    active.team = null
    if (epoch !== null && epoch !== undefined) {
      team.release(task.fp, epoch).catch((err: Error) => {
        ctx.guard('team claim release', () => {
          throw err
        })
      })
    }
  }
}

/**
 * The local claim under the team's: executes (owned), or hands out what this database already
 * knows (and tells the team), or stores the team's result locally first (`teams`).
 */
async function local(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  fenced: boolean,
  teams: Extract<ClaimAttempt, { kind: 'completed' }> | null,
): Promise<Execution> {
  const { task } = active
  const { claims, workerId, leaseMs } = ctx.o
  for (;;) {
    throwIfAborted(active)
    let attempt: ClaimAttempt = claims.claim(task.fp, workerId, leaseMs)
    if (attempt.kind === 'busy') {
      // Another process on this database holds it: its end is found here.
      const waited = await waitWithoutSlot(ctx, active, claims)
      if (waited.kind === 'released' || waited.kind === 'wait_timeout') continue
      attempt = waited
    }
    if (attempt.kind === 'completed') {
      // A failure kept here yields to the team's answer: another machine ran the task again
      // (--retry-failed, the console's retry) once the cause was fixed. Reusing the old failure
      // would have this machine fail a task the team has an answer for.
      if (teams && answersFailure(attempt.result, teams.result) && claims.forgetFailure(task.fp)) {
        continue
      }
      if (!teams) await shareLocal(ctx, active, attempt.result)
      return reuse(ctx, task, attempt.result, fenced)
    }
    if (!teams) return executeOwned(ctx, active, provider, attempt)
    if (attempt.tookOver) {
      recordAbandoned(ctx.o, task, attempt.previousOwner, attempt.previousEpoch)
    }
    const r = teams.result
    if (!claims.complete(task.fp, attempt.epoch, r.result, r.status, r.costMicros ?? null)) continue
    ledgerLostAnswers(ctx, task, r.result)
    const stored: StoredResult = { ...r, epoch: attempt.epoch, ref: claims.resultRef?.(task.fp) }
    return reuse(ctx, task, stored, fenced)
  }
}

/**
 * `--retry-failed` on a machine that never saw the failure the team kept: forgotten in the
 * team's store when it is older than the run (a failure of this run is its answer), so the task
 * runs again once, whoever claims it next.
 */
async function forgotOlderFailure(
  ctx: RunContext,
  active: Active,
  stored: StoredResult,
): Promise<boolean> {
  const run = ctx.o.retryFailedSince.get(active.task.batchId)
  if (!run || stored.status !== 'failed' || stored.completedAt >= run.since) return false
  // Once per fingerprint and run: a machine whose clock is behind this one's would make a failure
  // of this run look older, and every duplicate would run the task again.
  if (run.forgotten.has(active.task.fp)) return false
  run.forgotten.add(active.task.fp)
  try {
    await ctx.o.team?.forgetFailure(active.task.fp)
  } catch (err) {
    // Out of reach: the failure stands for this task, as a run without the flag would have it.
    ctx.guard('team failure retry', () => {
      throw err
    })
    return false
  }
  return true
}

/** The team has an answer where this database kept a failure. */
function answersFailure(here: StoredResult, teams: StoredResult): boolean {
  return here.status === 'failed' && teams.status !== 'failed'
}

/** What this database knew already becomes the team's too (its team claim completed with it). */
async function shareLocal(ctx: RunContext, active: Active, stored: StoredResult): Promise<void> {
  const team = ctx.o.team
  const epoch = active.team
  if (!team || epoch === null || epoch === undefined) return
  const { result, status, costMicros } = stored
  await team.complete(active.task.fp, epoch, result, status, costMicros ?? null, {
    signal: active.controller.signal,
  })
  active.team = null
}

/**
 * A task this machine began before it died (its calls sent, their answers never written) and
 * another machine completed meanwhile: each such call was paid, so it goes on the ledger as a
 * duplicate whose answer was lost, as a rerun that called again would put it (call.ts), at the
 * usage of the other machine's call (the same request: estimated). The journal is done with.
 */
function ledgerLostAnswers(ctx: RunContext, task: QueuedTask, result: string): void {
  const parts = ctx.journal
  if (!parts) return
  const entries = parts.journal.entries(task.fpId)
  if (entries.size === 0) return
  const lost = [...entries.values()].filter((e) => e.state === ENTRY_STATES.sent)
  if (lost.length > 0) {
    const usage = perCallUsage(result)
    for (const e of lost) {
      ctx.o.ledger.record({
        ...ledgerRow(ctx.o, task, e.idx, null),
        usage,
        outcome: 'duplicate',
        reason: ANSWER_LOST,
        estimated: true,
        latencyMs: null,
        status: null,
      })
    }
  }
  parts.journal.drop(task.fpId)
}

/** A stored result's usage per call (its totals over its calls), for a lost answer's estimate. */
function perCallUsage(result: string): Usage {
  let parsed: { usage?: Partial<Usage>; steps?: unknown } = {}
  try {
    parsed = JSON.parse(result) as typeof parsed
  } catch {
    // A result without usage: the lost call is ledgered at zero, still counted.
  }
  const calls = typeof parsed.steps === 'number' && parsed.steps > 0 ? parsed.steps : 1
  const per = (n: number | undefined) => Math.round((n ?? 0) / calls)
  const u = parsed.usage ?? {}
  return {
    inputTokens: per(u.inputTokens),
    cachedInputTokens: per(u.cachedInputTokens),
    cacheWriteTokens: per(u.cacheWriteTokens),
    outputTokens: per(u.outputTokens),
  }
}

/**
 * One round of team renewals for the tasks holding a team claim, in one round trip; a claim lost
 * is a fencing, as a local one. Null when there is nothing to renew.
 */
export function renewTeamClaims(
  team: TeamClaimStore,
  actives: Iterable<Active>,
  leaseMs: number,
): Promise<void> | null {
  const held = [...actives].filter((a) => typeof a.team === 'number' && !a.lost)
  if (held.length === 0) return null
  const sent = held.map((a) => ({ fp: a.task.fp, epoch: a.team as number }))
  return team.renewMany(sent, leaseMs).then((renewed) => {
    // Out of reach (null): the next round after the reconnect renews.
    renewed?.forEach((ok, i) => {
      const a = held[i] as Active
      if (!ok && a.team === sent[i]?.epoch) a.lost = true
    })
  })
}
