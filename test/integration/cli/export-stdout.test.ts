// `pacer export --out -` streams the CSV to stdout (like any Unix filter) instead of writing a file
// named "-"; the "wrote N rows" note stays on stderr, and a reader that stops early is not an error.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../src/main/engine/db'
import { Ledger } from '../../../src/main/engine/ledger/ledger'
import { Prices } from '../../../src/main/engine/pricing/prices'
import { ROOT, runPacer, startPacer, tempDir, writeJsonl } from '../../helpers/cli'

describe('pacer export --out -', () => {
  it('writes the CSV to stdout, byte for byte what a file export holds, and no file "-"', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'b.jsonl', [
      { type: 'summarize', payload: { prompt: 'the ledger, briefly' } },
      { type: 'agent', steps: 3, payload: { prompt: 'plan, check, report' } },
      { type: 'summarize', payload: { prompt: 'the ledger, briefly' } },
    ])
    const run = await runPacer(['run', file, '--db', db, '--sim-latency-scale', '0.02'])
    expect(run.code, run.stderr).toBe(0)
    const dash = join(ROOT, '-')
    const dashBefore = existsSync(dash)

    for (const kind of ['events', 'summary']) {
      const toFile = join(dir, `${kind}.csv`)
      const viaFile = await runPacer(['export', '--db', db, '--kind', kind, '--out', toFile])
      expect(viaFile.code, viaFile.stderr).toBe(0)
      const viaStdout = await runPacer(['export', '--db', db, '--kind', kind, '--out', '-'])
      expect(viaStdout.code, viaStdout.stderr).toBe(0)
      expect(viaStdout.stdout).toBe(readFileSync(toFile, 'utf8'))
      const rows = parse(viaStdout.stdout, { columns: true }) as unknown[]
      expect(rows.length).toBeGreaterThan(0)
      expect(viaStdout.stderr).toBe(`wrote ${rows.length} ${kind} row(s) to stdout\n`)
    }
    expect(existsSync(dash)).toBe(dashBefore)
    expect(existsSync(join(dir, '-'))).toBe(false)
  })

  it('streams a ledger far larger than a pipe buffer, and stops quietly when the reader does', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const handle = openDatabase(db)
    const ledger = new Ledger({ db: handle, prices: new Prices() })
    const ROWS = 20_000
    handle.transaction(() => {
      for (let i = 0; i < ROWS; i++) {
        ledger.record({
          ts: 1_700_000_000_000 + i,
          taskId: i + 1,
          batchId: 'b1',
          fp: `fp${i}`,
          worker: 'w1',
          taskType: 'summarize',
          provider: 'sim',
          model: 'sim-small',
          step: 1,
          usage: { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 20 },
          outcome: 'executed',
          latencyMs: 10,
          status: 200,
          epoch: 1,
        })
      }
    })()
    handle.close()

    // All of it, through backpressure: every row arrives, in order.
    const all = await runPacer(['export', '--db', db, '--out', '-'])
    expect(all.code, all.stderr).toBe(0)
    expect(all.stdout.length).toBeGreaterThan(1_000_000)
    expect(parse(all.stdout, { columns: true })).toHaveLength(ROWS)
    expect(all.stderr).toBe(`wrote ${ROWS} events row(s) to stdout\n`)

    // `pacer export --out - | head -c 1000`: the reader closes after the first chunk.
    const early = startPacer(['export', '--db', db, '--out', '-'])
    early.child.stdout!.once('data', () => early.child.stdout!.destroy())
    const r = await early.done
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe('')
  })
})
