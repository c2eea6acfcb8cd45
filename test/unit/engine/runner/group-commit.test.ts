// The runner on its own: a real SQLite file, the real claims, queue, ledger and scheduler, and a
// provider written in the test, so each case decides what it answers and counts the calls.
// Here on the engine's group commit (StepWrites): claims on disk before a call, one result
// shared by duplicates, deadlines.
import { afterEach, describe, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import { answer, cleanUp, cleanups, harness } from './harness'

afterEach(cleanUp)

describe('Runner on the engine’s group commit', () => {
  it('sends a call only once its claim is on disk, for another process to see', async () => {
    let observer: Database.Database | undefined
    const seenAtCall: string[] = []
    const h = harness(
      () => {
        // Another process looking at the file the moment the request leaves.
        observer ??= new Database(h.file.file, { readonly: true })
        const claims = observer.prepare('SELECT state FROM claims').pluck().all() as string[]
        seenAtCall.push(claims.join(','))
        return answer('ok')
      },
      {},
      { grouped: true },
    )
    cleanups.push(async () => {
      observer?.close()
    })
    await h.run([{ payload: { durable: 1 } }])
    expect(seenAtCall).toEqual(['running'])
    expect(h.warnings).toEqual([])
  })

  it('ends a task in the transaction that completes its claim: never completed and still running', async () => {
    let observer: Database.Database | undefined
    const seen = new Set<string>()
    let watching = true
    const h = harness(() => answer('ok'), {}, { grouped: true })
    // Another process looking at the file at every turn of the event loop, between commits.
    const watch = () => {
      if (!watching) return
      observer ??= new Database(h.file.file, { readonly: true })
      const rows = observer
        .prepare('SELECT c.state AS claim, t.status AS task FROM tasks t JOIN claims c USING (fp)')
        .all() as { claim: string; task: string }[]
      for (const r of rows) seen.add(`${r.claim}/${r.task}`)
      setImmediate(watch)
    }
    setImmediate(watch)
    cleanups.push(async () => {
      watching = false
      observer?.close()
    })
    await h.run([{ payload: { end: 1 } }, { payload: { end: 2 } }, { payload: { end: 3 } }])
    watching = false
    expect(seen).toContain('running/running')
    expect(seen).toContain('completed/succeeded')
    expect(seen).not.toContain('completed/running')
  })

  it('stores one result for a task and its duplicates: they point at the claim’s', async () => {
    const h = harness(() => answer('shared answer'), {}, { grouped: true })
    const batchId = await h.run([
      { payload: { dup: 1 } },
      { payload: { dup: 1 } },
      { payload: { dup: 1 } },
    ])
    const refs = h.file.db
      .prepare('SELECT DISTINCT result_id FROM task_queue WHERE result_id IS NOT NULL')
      .pluck()
      .all()
    expect(refs).toHaveLength(1)
    expect(h.file.db.prepare('SELECT COUNT(*) FROM results').pluck().get()).toBe(1)
    for (const t of h.tasks(batchId)) {
      expect(JSON.parse(h.queue.taskResult(t.id)!)).toMatchObject({ text: 'shared answer' })
    }
    // What the reuses saved is what the execution cost, as its claim kept it.
    expect(h.ledger.totals()).toMatchObject({ executed: 1, reused: 2 })
    const [executed] = [...h.ledger.events()].filter((r) => r.outcome === 'executed')
    const saved = [...h.ledger.events()]
      .filter((r) => r.outcome === 'reused')
      .map((r) => r.savedMicros)
    expect(saved).toEqual([executed!.costMicros, executed!.costMicros])
  })

  it('a call past its deadline is given up alone: the task goes on with a fresh signal', async () => {
    const signals: AbortSignal[] = []
    const h = harness(
      (request, n) => {
        const signal = request.signal!
        signals.push(signal)
        if (n > 1) return answer('second try')
        // The first call never answers by itself: only its deadline ends it.
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason)),
        )
      },
      { callTimeoutMs: 100 },
      { grouped: true },
    )
    const batchId = await h.run([{ payload: { slow: 1 } }])
    expect(h.tasks(batchId)).toMatchObject([{ status: 'succeeded' }])
    expect(signals).toHaveLength(2)
    expect(signals[0]!.aborted).toBe(true)
    expect(String(signals[0]!.reason)).toMatch(/no answer within 100 ms/)
    // The retry went out on a signal of its own, which its deadline never touched.
    expect(signals[1]).not.toBe(signals[0])
    expect(signals[1]!.aborted).toBe(false)
    // Its own outcome on the ledger, and a timeout to the controller (a cut, not an error).
    const rows = [...h.ledger.events()]
    expect(rows.map((r) => r.outcome)).toEqual(['timeout', 'executed'])
    expect(h.scheduler.snapshot()[0]).toMatchObject({ throttles: 1, errors: 0 })
  })

  it('a call that always hangs is retried once, then the task fails with the timeout', async () => {
    const h = harness(
      (request) =>
        new Promise((_, reject) =>
          request.signal!.addEventListener('abort', () => reject(request.signal!.reason)),
        ),
      { callTimeoutMs: 50 },
    )
    const batchId = await h.run([{ payload: { hangs: 1 } }])
    expect(h.requests).toHaveLength(2)
    expect(h.outcomes()).toEqual(['timeout', 'timeout'])
    expect(h.tasks(batchId)[0]).toMatchObject({
      status: 'failed',
      error: 'timeout: gave up after 2 calls with no answer within 50 ms',
    })
  })
})
