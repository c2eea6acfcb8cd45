// A rollup that no maintained table answers reads the ledger itself, which takes a while on a big
// one: `pacer serve` computes it off its event loop, so the console's other requests keep being
// answered meanwhile.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../src/main/engine/db'
import { prepareRowInsert } from '../../../src/main/engine/ledger/record'
import { startPacer, tempDir, until } from '../../helpers/cli'

const T0 = 1_700_000_000_000
// Big enough that the rollup below takes many times a scheduler:get round trip on a busy machine,
// small enough to build in a second or two.
const EXECUTIONS = 30_000

/** A ledger of one batch written in one transaction: every task executed once, then reused once. */
function bigLedger(file: string): void {
  const db = openDatabase(file)
  const insert = prepareRowInsert(db)
  const row = {
    batchId: 'b1',
    worker: 'w1',
    provider: 'sim',
    model: 'sim-small',
    step: 1,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    latencyMs: 5,
    status: 200,
    epoch: 1,
    priceVersion: 'test',
    cacheSavedMicros: null,
    cacheWriteExtraMicros: null,
  }
  db.transaction(() => {
    for (let i = 0; i < EXECUTIONS; i++) {
      const fp = `fp-${i}`.padEnd(64, '0')
      const ts = T0 + i * 10
      const taskType = `type-${i % 4}`
      const task = { ...row, fp, taskType }
      insert.row({
        ...task,
        ts,
        taskId: 2 * i + 1,
        inputTokens: 1_000,
        costMicros: 3_000,
        savedMicros: null,
        outcome: 'executed',
      })
      insert.row({
        ...task,
        ts: ts + 5,
        taskId: 2 * i + 2,
        inputTokens: 0,
        costMicros: 0,
        savedMicros: 3_000,
        outcome: 'reused',
      })
    }
  })()
  db.close()
}

describe('pacer serve during a long ledger read', () => {
  it('answers other commands while a rollup of a big ledger is computed', async () => {
    const db = join(tempDir(), 'p.db')
    bigLedger(db)
    const server = startPacer(['serve', '--db', db, '--port', '0'])
    try {
      const url = new URL(
        await until(() => /Pacer console: (\S+)/.exec(server.output().stdout)?.[1], 60_000),
      )
      const token = url.searchParams.get('token')!
      const command = async (name: string, body: unknown) => {
        const res = await fetch(new URL(`/api/commands/${name}`, url), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
        return (await res.json()) as { ok: boolean; value?: unknown }
      }

      // A batch within a time window: no maintained rollup has that cut.
      let rollupDone = false
      const rollup = command('ledger:rollup', { batchId: 'b1', since: T0 }).finally(() => {
        rollupDone = true
      })
      // Other commands, one after the other, for as long as the rollup is being computed. Were it
      // computed on the server's thread, none of them could be answered before it.
      let answered = 0
      while (!rollupDone && answered < 10_000) {
        const reply = await command('scheduler:get', {})
        expect(reply.ok).toBe(true)
        if (!rollupDone) answered++
      }
      const result = (await rollup) as {
        ok: boolean
        value: { totals: { executed: number; reused: number } }
      }
      expect(result.ok).toBe(true)
      expect(result.value.totals).toMatchObject({ executed: EXECUTIONS, reused: EXECUTIONS })
      expect(answered).toBeGreaterThanOrEqual(3)
    } finally {
      server.child.kill('SIGINT')
      await server.done
    }
  })
})
