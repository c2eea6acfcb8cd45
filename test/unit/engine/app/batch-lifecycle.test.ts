// "Resume or enqueue this file" and the resume the console shares with it, on a real SQLite file
// and the simulated provider: two engines on one file stand for two `pacer run` processes.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseBatchFile } from '../../../../src/main/engine/intake/batch-file'
import type { LineError } from '../../../../src/shared/contract'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import type { FileBatch } from '../../../../src/main/engine/app/batch-lifecycle'
import type { StreamedFile } from '../../../../src/main/engine/app/batch-stream'
import { query, tempDir } from '../../../helpers/cli'

const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.shutdown({ graceMs: 0 })))
})

/** An engine as `pacer run` opens one (it runs only the batches it starts), or a console's. */
function open(dbPath: string, workerId: string, scoped = true): Engine {
  const engine = createEngine({
    dbPath,
    workerId,
    batchIds: scoped ? [] : null,
    sim: { latencyScale: 0.02 },
  })
  engines.push(engine)
  return engine
}

function jsonl(n: number, from = 0): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({ type: 'job', payload: { i: i + from } }),
  )
    .join('\n')
    .concat('\n')
}

/** The file as `pacer run` hands it over: parsed, resolved with the run's defaults. */
function fileOf(engine: Engine, content: string, over: Partial<FileBatch> = {}): FileBatch {
  const defaults = over.defaults ?? { provider: 'sim', model: 'sim-small' }
  const { tasks, errors } = engine.resolve(parseBatchFile(content, 'jsonl').tasks, defaults)
  expect(errors).toEqual([])
  return {
    content,
    source: '/batches/jobs.jsonl',
    name: 'jobs.jsonl',
    tasks,
    defaults,
    audit: false,
    ...over,
  }
}

const driverOf = (dbPath: string, batchId: string) =>
  query<{ driver: string | null }>(dbPath, 'SELECT driver FROM batches WHERE id = ?', batchId)[0]
    ?.driver

/**
 * A new database where a first run started the file and was stopped as its first task ended: the
 * batch is left interrupted, with some tasks done.
 */
async function interruptedRun(content: string): Promise<{ dbPath: string; batchId: string }> {
  const dbPath = join(tempDir(), 'pacer.db')
  const engine = open(dbPath, 'run-a')
  const { batchId } = engine.batches.startFile(fileOf(engine, content))
  const run = engine.batches.drive(batchId)
  engine.runner.on('task', (e) => {
    if (e.status === 'succeeded') run.stop()
  })
  const end = await run.done
  expect(end.interrupted).toBe(true)
  expect(end.batch).toMatchObject({ id: batchId, state: 'interrupted' })
  // The calls under way when it stopped finished; nothing is left running or claimed.
  expect(end.batch!.counts.succeeded).toBeGreaterThan(0)
  expect(end.batch!.counts.queued).toBeGreaterThan(0)
  expect(end.batch!.counts.running).toBe(0)
  expect(query(dbPath, `SELECT * FROM claims WHERE state = 'running'`)).toHaveLength(0)
  return { dbPath, batchId }
}

describe('engine.batches.startFile: resume or enqueue a batch file', () => {
  it('queues a new batch that this engine drives, and drive runs it to done', async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const engine = open(dbPath, 'run-a')
    const started = engine.batches.startFile(fileOf(engine, jsonl(5)))
    expect(started).toMatchObject({ resumed: false, retried: 0 })
    expect(started.batch).toMatchObject({ id: started.batchId, state: 'running', total: 5 })
    expect(driverOf(dbPath, started.batchId)).toBe('run-a')

    const seen: string[] = []
    const end = await engine.batches.drive(started.batchId, {
      onProgress: (b) => seen.push(b?.state ?? 'missing'),
    }).done
    expect(end.interrupted).toBe(false)
    expect(end.batch).toMatchObject({ state: 'done', counts: { succeeded: 5, queued: 0 } })
    expect(seen.length).toBeGreaterThan(0)
  })

  it('resumes the interrupted batch of the same file in another process, without running done tasks again', async () => {
    const content = jsonl(20)
    const { dbPath, batchId } = await interruptedRun(content)

    const engine = open(dbPath, 'run-b')
    const started = engine.batches.startFile(fileOf(engine, content))
    expect(started).toMatchObject({ batchId, resumed: true })
    expect(started.batch.state).toBe('running')
    expect(driverOf(dbPath, batchId)).toBe('run-b')
    const end = await engine.batches.drive(batchId).done
    expect(end).toMatchObject({ interrupted: false, batch: { state: 'done', total: 20 } })
    expect(end.batch!.counts).toMatchObject({ succeeded: 20, queued: 0, running: 0 })
    // Every task was executed exactly once, across both runs.
    const perTask = query<{ n: number }>(
      dbPath,
      `SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'executed' GROUP BY fp`,
    )
    expect(perTask).toHaveLength(20)
    expect(perTask.every((r) => r.n === 1)).toBe(true)
    expect(query(dbPath, 'SELECT id FROM batches')).toHaveLength(1)
  })

  it('fresh (--new) queues a new batch and leaves the interrupted one as it is', async () => {
    const content = jsonl(20)
    const { dbPath, batchId: interrupted } = await interruptedRun(content)

    const engine = open(dbPath, 'run-b')
    const started = engine.batches.startFile(fileOf(engine, content, { fresh: true }))
    expect(started.resumed).toBe(false)
    expect(started.batchId).not.toBe(interrupted)
    expect(started.batch).toMatchObject({ state: 'running', total: 20 })
    const states = query<{ id: string; state: string }>(dbPath, 'SELECT id, state FROM batches')
    expect(states).toContainEqual({ id: interrupted, state: 'interrupted' })
  })

  it('the same text with other defaults or another audit mode is another file', async () => {
    const content = jsonl(20)
    const { dbPath, batchId: interrupted } = await interruptedRun(content)

    const engine = open(dbPath, 'run-b')
    const audited = engine.batches.startFile(fileOf(engine, content, { audit: true }))
    const otherModel = engine.batches.startFile(
      fileOf(engine, content, { defaults: { provider: 'sim', model: 'sim-large' } }),
    )
    for (const s of [audited, otherModel]) {
      expect(s.resumed).toBe(false)
      expect(s.batchId).not.toBe(interrupted)
    }
    expect(audited.batchId).not.toBe(otherModel.batchId)
    // And the original file still resumes its own batch.
    expect(engine.batches.startFile(fileOf(engine, content))).toMatchObject({
      batchId: interrupted,
      resumed: true,
    })
  })

  it('retryFailed forgets the stored failures of the file’s tasks, so they run again', () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const engine = open(dbPath, 'run-a')
    const file = fileOf(engine, jsonl(3), { retryFailed: true })
    const failed = file.tasks[1]!.fp
    const claim = engine.claims.claim(failed, 'earlier-run', 30_000)
    if (claim.kind !== 'owned') throw new Error(`expected to own the claim, got ${claim.kind}`)
    expect(engine.claims.complete(failed, claim.epoch, '{"error":"refused"}', 'failed')).toBe(true)
    expect(engine.claims.getResult(failed)?.status).toBe('failed')

    expect(engine.batches.startFile(file).retried).toBe(1)
    expect(engine.claims.getResult(failed)).toBeUndefined()
  })
})

describe('engine.batches.resume, as batches:resume uses it', () => {
  it('an interrupted `pacer run` batch becomes the consoles’ to run', async () => {
    const { dbPath, batchId } = await interruptedRun(jsonl(20))
    const consoleEngine = open(dbPath, 'console', false)
    const b = await consoleEngine.handlers['batches:resume']({ batchId })
    expect(b.state).toBe('running')
    expect(driverOf(dbPath, batchId)).toBeNull()
  })

  it('a paused one keeps its driver, which is still waiting for it', async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const run = open(dbPath, 'run-a')
    const { batchId } = run.batches.startFile(fileOf(run, jsonl(3)))
    const consoleEngine = open(dbPath, 'console', false)
    expect((await consoleEngine.handlers['batches:pause']({ batchId })).state).toBe('paused')
    expect((await consoleEngine.handlers['batches:resume']({ batchId })).state).toBe('running')
    expect(driverOf(dbPath, batchId)).toBe('run-a')
  })

  it('changes nothing for a batch that is neither interrupted nor paused', async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const engine = open(dbPath, 'run-a')
    const { batchId } = engine.batches.startFile(fileOf(engine, jsonl(2)))
    await engine.batches.drive(batchId).done
    expect(engine.batches.resume(batchId, { driver: null, fromPaused: true })).toBe(false)
    expect(engine.batches.get(batchId).state).toBe('done')
    expect(driverOf(dbPath, batchId)).toBe('run-a')
    // `pacer run` resumes only an interrupted batch, never a paused one.
    const other = engine.batches.startFile(fileOf(engine, jsonl(2, 100)))
    engine.batches.pause(other.batchId)
    expect(engine.batches.resume(other.batchId, { driver: 'run-b', fromPaused: false })).toBe(false)
    expect(engine.batches.get(other.batchId).state).toBe('paused')
  })
})

describe('engine.batches.drive', () => {
  it('a batch cancelled from a console ends the run: nothing left queued or running', async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const engine = open(dbPath, 'run-a')
    const { batchId } = engine.batches.startFile(fileOf(engine, jsonl(20)))
    const run = engine.batches.drive(batchId)
    const consoleEngine = open(dbPath, 'console', false)
    await consoleEngine.handlers['batches:cancel']({ batchId })
    const end = await run.done
    expect(end.interrupted).toBe(false)
    expect(end.batch).toMatchObject({ state: 'cancelled', counts: { queued: 0, running: 0 } })
    expect(end.batch!.counts.cancelled).toBeGreaterThan(0)
    expect(query(dbPath, `SELECT * FROM claims WHERE state = 'running'`)).toHaveLength(0)
  })

  it('abort (a second Ctrl-C) gives the calls in flight back: the batch is interrupted, nothing lost', async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const engine = open(dbPath, 'run-a')
    const { batchId } = engine.batches.startFile(fileOf(engine, jsonl(20)))
    const run = engine.batches.drive(batchId)
    run.abort()
    const end = await run.done
    expect(end).toMatchObject({ interrupted: true, batch: { state: 'interrupted' } })
    const { counts } = end.batch!
    expect(counts.running).toBe(0)
    expect(counts.queued + counts.succeeded).toBe(20)
    expect(query(dbPath, `SELECT * FROM claims WHERE state = 'running'`)).toHaveLength(0)
  })
})

describe('engine.batches.startStreamedFile: a file read line by line into one transaction', () => {
  const lines = [
    JSON.stringify({ type: 'job', payload: { i: 1 } }),
    JSON.stringify({ type: 'job', payload: { i: 2 }, steps: 3 }),
    JSON.stringify({ type: 'job', payload: { i: 1 } }),
    JSON.stringify({ type: 'job', key: 'order-1', payload: { i: 3 } }),
    '',
    JSON.stringify({ type: 'job', key: 'order-1', payload: { i: 3 } }),
    JSON.stringify({ type: 'other', payload: { é: 'ü' }, model: 'sim-large' }),
  ]
  const bad = [
    '{"type": "job", "payload": ',
    JSON.stringify({ payload: 1 }),
    JSON.stringify({ type: 'job', key: 'order-1', payload: { i: 4 } }),
    JSON.stringify({ type: 'job', payload: 1, provider: 'nowhere' }),
  ]

  function streamed(engine: Engine, path: string, over: Partial<StreamedFile> = {}) {
    const errors: LineError[] = []
    const run = engine.batches.startStreamedFile({
      path,
      format: 'jsonl',
      source: path,
      name: 'jobs.jsonl',
      defaults: { provider: 'sim', model: 'sim-small' },
      audit: false,
      onError: (e) => errors.push(e),
      ...over,
    })
    return run.then((out) => ({ ...out, errors }))
  }

  const queued = (dbPath: string) =>
    query(
      dbPath,
      'SELECT seq, type, payload, fp, key, steps, provider, model, status FROM tasks ORDER BY seq',
    )

  it('queues what startFile queues for the same text', async () => {
    const content = `${lines.join('\n')}\n`
    const dir = tempDir()
    const path = join(dir, 'jobs.jsonl')
    writeFileSync(path, content)
    const inMemory = join(dir, 'memory.db')
    const a = open(inMemory, 'run-a')
    a.batches.startFile(fileOf(a, content))
    const streamedDb = join(dir, 'streamed.db')
    const b = open(streamedDb, 'run-b')
    const out = await streamed(b, path)
    expect(out).toMatchObject({ valid: 6, invalidLines: 0, errors: [] })
    expect(out.started).toMatchObject({ resumed: false, batch: { total: 6, state: 'running' } })
    expect(queued(streamedDb)).toEqual(queued(inMemory))
  })

  it('queues nothing when a line is invalid, and reports each, in order', async () => {
    const dir = tempDir()
    const path = join(dir, 'jobs.jsonl')
    writeFileSync(path, [...lines, ...bad].join('\n'))
    const dbPath = join(dir, 'pacer.db')
    const engine = open(dbPath, 'run-a')
    const out = await streamed(engine, path)
    expect(out.started).toBeNull()
    expect(out).toMatchObject({ valid: 6, invalidLines: 4 })
    expect(out.errors.map((e) => [e.line, e.field])).toEqual([
      [8, undefined],
      [9, 'type'],
      [10, 'key'],
      [11, 'provider'],
    ])
    expect(out.errors[2]!.message).toMatch(/key "order-1" was used on line 4/)
    await engine.shutdown()
    expect(query(dbPath, 'SELECT * FROM tasks')).toEqual([])
    expect(query(dbPath, 'SELECT * FROM batches')).toEqual([])
    expect(query(dbPath, 'SELECT * FROM idempotency_keys')).toEqual([])

    // --skip-invalid: the valid lines are queued.
    const again = open(dbPath, 'run-b')
    const skipped = await streamed(again, path, { skipInvalid: true })
    expect(skipped.started).toMatchObject({ batch: { total: 6 } })
    expect(skipped.invalidLines).toBe(4)
  })

  it('refuses a key the database knows with another payload, naming the line; nothing is queued', async () => {
    const dir = tempDir()
    const dbPath = join(dir, 'pacer.db')
    const engine = open(dbPath, 'run-a')
    engine.batches.startFile(
      fileOf(engine, `${JSON.stringify({ type: 'job', key: 'k', payload: 1 })}\n`),
    )
    const path = join(dir, 'next.jsonl')
    writeFileSync(
      path,
      [
        JSON.stringify({ type: 'job', payload: 9 }),
        JSON.stringify({ type: 'job', key: 'k', payload: 2 }),
      ].join('\n'),
    )
    await expect(streamed(engine, path)).rejects.toMatchObject({
      code: 'key_reused_with_different_payload',
      message: expect.stringMatching(/^line 2: /) as string,
    })
    expect(query(dbPath, 'SELECT COUNT(*) AS n FROM tasks')).toEqual([{ n: 1 }])
  })

  it('resumes the interrupted batch of the same file instead of queuing it again', async () => {
    const dir = tempDir()
    const path = join(dir, 'jobs.jsonl')
    writeFileSync(path, jsonl(20))
    const dbPath = join(dir, 'pacer.db')
    const first = open(dbPath, 'run-a')
    const { started } = await streamed(first, path)
    const run = first.batches.drive(started!.batchId)
    run.stop()
    expect((await run.done).interrupted).toBe(true)

    const second = open(dbPath, 'run-b')
    const resumed = await streamed(second, path)
    expect(resumed.started).toMatchObject({ batchId: started!.batchId, resumed: true })
    expect(query(dbPath, 'SELECT COUNT(*) AS n FROM batches')).toEqual([{ n: 1 }])
  })
})
