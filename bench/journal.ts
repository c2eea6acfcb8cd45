// What the call journal costs per provider call: the same batch of multi-step tasks through the
// runner with the journal (an intent row before every request, the answer in its ledger row's
// transaction, the rows dropped with the result) and without it, in the same process, alternating
// rounds on fresh database files. The simulated provider answers on the next timer tick with room
// for every call and the limit is pinned, so the difference is the journal's bookkeeping. Then a
// rerun of the whole batch from its journal (every call replayed), per call.
//
//   node bin/run-ts.cjs bench/journal.ts [N] [STEPS]   N tasks of STEPS calls (default 1000 x 5)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { SqliteClaimStore } from '../src/main/engine/claims/claims'
import { openDatabase } from '../src/main/engine/db'
import { StepWrites } from '../src/main/engine/db/step-writes'
import { executionFingerprint, fingerprint } from '../src/main/engine/core/fingerprint'
import { CallJournal } from '../src/main/engine/runner/durable/journal'
import { Ledger } from '../src/main/engine/ledger/ledger'
import { Prices } from '../src/main/engine/pricing/prices'
import { createSimProvider } from '../src/main/engine/providers/sim'
import { TaskQueue } from '../src/main/engine/queue/queue'
import { Runner } from '../src/main/engine/runner'
import { Scheduler } from '../src/main/engine/pacing/scheduler'
import { TaskLog } from '../src/main/engine/runner/durable/task-log'
import { systemClock } from '../src/main/engine/core/types'

const ROUNDS = 5
const CONCURRENCY = 64
const N = Number(process.argv[2] ?? 1000)
const STEPS = Number(process.argv[3] ?? 5)
const CALLS = N * STEPS

interface Round {
  /** Wall time of the batch, ms. */
  ms: number
  executed: number
  replayed: number
  /** Journal rows left once every result was stored. */
  left: number
}

/** One database with one runner on it; `batch()` runs the N tasks as a new batch. */
function setup(journaled: boolean) {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-bench-journal-'))
  const db = openDatabase(path.join(dir, 'pacer.db'))
  const clock = systemClock
  const writes = new StepWrites(db, { onError: (err) => console.error(err.message) })
  const ledger = new Ledger({ db, prices: new Prices(), clock, writes })
  const claims = new SqliteClaimStore({ db, clock, writes, resultTtlMs: 0 })
  const queue = new TaskQueue(db, clock, writes)
  const scheduler = new Scheduler({
    clock,
    params: { min: CONCURRENCY, max: CONCURRENCY, initial: CONCURRENCY },
  })
  const sim = createSimProvider({ latencyScale: 0, capacity: 1_000_000 })
  const runner = new Runner({
    queue,
    claims,
    scheduler,
    ledger,
    clock,
    workerId: 'bench',
    provider: (id) => (id === 'sim' ? sim : undefined),
    writes,
    journal: journaled
      ? { journal: new CallJournal(db, writes), log: new TaskLog(db, writes) }
      : null,
  })
  const tasks = Array.from({ length: N }, (_, i) => {
    const payload = { prompt: `task ${i}: plan the quarterly report in ${STEPS} steps` }
    return {
      seq: i + 1,
      type: 'bench',
      payloadJson: JSON.stringify(payload),
      fp: executionFingerprint(fingerprint('bench', payload), {
        provider: 'sim',
        model: 'sim-small',
        steps: STEPS,
      }),
      key: null,
      steps: STEPS,
      provider: 'sim',
      model: 'sim-small',
    }
  })
  async function batch(): Promise<Round> {
    const started = performance.now()
    const batchId = queue.createBatch(
      { name: 'bench', source: null, sourceHash: null, audit: false },
      tasks,
    )
    runner.start()
    runner.pump()
    await new Promise<void>((resolve) => {
      const check = () => {
        const c = queue.counts(batchId)
        if (c.queued + c.running === 0) resolve()
        else setImmediate(check)
      }
      check()
    })
    const ms = performance.now() - started
    writes.commit()
    const t = ledger.totals({ batchId })
    const left = db.prepare('SELECT COUNT(*) FROM call_journal').pluck().get() as number
    return { ms, executed: t.executed, replayed: t.replayed, left }
  }
  return {
    db,
    batch,
    async close() {
      await runner.stop({ graceMs: 0 })
      writes.commit()
      scheduler.close()
      await ledger.close()
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A rerun of executions whose every call is journaled: the first run's results are taken back
 * (claims released, journal rows written back), so the rerun replays all N × STEPS calls.
 */
async function replayRound(): Promise<Round> {
  const s = setup(true)
  try {
    const keep = s.db.prepare('CREATE TEMP TABLE kept AS SELECT * FROM call_journal WHERE 0')
    keep.run()
    s.db.exec(`CREATE TEMP TRIGGER keep_journal BEFORE DELETE ON call_journal
      BEGIN INSERT OR REPLACE INTO kept SELECT * FROM call_journal WHERE fp_id = OLD.fp_id AND idx = OLD.idx; END`)
    await s.batch()
    s.db.exec(`DROP TRIGGER keep_journal;
      INSERT INTO call_journal SELECT * FROM kept;
      UPDATE fingerprints SET state = 'released', result_id = NULL WHERE state = 'completed'`)
    return await s.batch()
  } finally {
    await s.close()
  }
}

async function liveRound(journaled: boolean): Promise<Round> {
  const s = setup(journaled)
  try {
    return await s.batch()
  } finally {
    await s.close()
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function main(): Promise<void> {
  const without: number[] = []
  const withJournal: number[] = []
  const replays: number[] = []
  let ok = true
  for (let r = 0; r < ROUNDS; r++) {
    const a = await liveRound(false)
    const b = await liveRound(true)
    const c = await replayRound()
    without.push(a.ms)
    withJournal.push(b.ms)
    replays.push(c.ms)
    if (a.executed !== N || b.executed !== N || b.left !== 0 || c.replayed !== CALLS) {
      console.log(
        `  round ${r + 1}: executed ${a.executed}/${b.executed}, journal rows left ${b.left}, replayed ${c.replayed}: WRONG`,
      )
      ok = false
    }
  }
  const a = median(without)
  const b = median(withJournal)
  const c = median(replays)
  const us = (ms: number) => ((ms * 1000) / CALLS).toFixed(1).padStart(7)
  console.log(
    `journal bench: ${N} tasks × ${STEPS} calls, ${CONCURRENCY} concurrent, ${ROUNDS} rounds; median µs per call`,
  )
  console.log(`  live, no journal:               ${us(a)}   1.00`)
  console.log(`  live, journaled:                ${us(b)}   ${(b / a).toFixed(2)}`)
  console.log(`  rerun, every call replayed:     ${us(c)}   ${(c / a).toFixed(2)}`)
  console.log(`  the journal adds ${(((b - a) * 1000) / CALLS).toFixed(1)} µs per call`)
  if (!ok) process.exitCode = 1
}

void main()
