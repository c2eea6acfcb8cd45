import { Writable } from 'node:stream'
import v8 from 'node:v8'
import vm from 'node:vm'
import { parse } from 'csv-parse/sync'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { csvStream, neutralizeCell, type CsvColumn } from '../../../../src/main/engine/core/csv'
import { Ledger, type LedgerRecordInput } from '../../../../src/main/engine/ledger/ledger'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import { openLedgerDb } from '../../../helpers/ledger-db'

/** A writable that keeps the text (or only counts it) and reports how it was fed. */
function sink(opts: { keep?: boolean; slow?: boolean; highWaterMark?: number } = {}) {
  const stats = { chunks: 0, bytes: 0, text: '', maxBuffered: 0, onChunk: () => {} }
  const out = new Writable({
    highWaterMark: opts.highWaterMark ?? 16 * 1024,
    write(chunk: Buffer, _enc, done) {
      stats.chunks++
      stats.bytes += chunk.length
      if (opts.keep !== false) stats.text += chunk.toString('utf8')
      stats.maxBuffered = Math.max(stats.maxBuffered, out.writableLength)
      stats.onChunk()
      if (opts.slow) setImmediate(done)
      else done()
    },
  })
  return { out, stats }
}

const parseCsv = (text: string): string[][] => parse(text, { relax_column_count: false })

describe('neutralizeCell', () => {
  it('prefixes string cells that start a formula (OWASP: = + - @ tab CR)', () => {
    for (const s of ['=1+2', '+1', '-1', '@SUM(A1)', '\tx', '\rx', '=HYPERLINK("http://x")']) {
      expect(neutralizeCell(s)).toBe(`'${s}`)
    }
    // Full-width forms, which Apple Numbers normalizes to ASCII before evaluating.
    expect(neutralizeCell('\uFF1D1+1')).toBe("'\uFF1D1+1")
  })

  it('leaves other strings, numbers and empty cells alone', () => {
    expect(neutralizeCell('a=b')).toBe('a=b')
    expect(neutralizeCell(' =1')).toBe(' =1')
    expect(neutralizeCell('')).toBe('')
    expect(neutralizeCell("'=1")).toBe("'=1")
    expect(neutralizeCell(-5)).toBe(-5)
    expect(neutralizeCell(0)).toBe(0)
    expect(neutralizeCell(null)).toBeNull()
    expect(neutralizeCell(undefined)).toBeNull()
  })
})

describe('csvStream', () => {
  interface Row {
    text: string
    n: number | null
    money: string | null
  }
  const columns: CsvColumn<Row>[] = [
    { header: 'text', value: (r) => r.text },
    { header: 'n', value: (r) => r.n },
    { header: 'money_usd', value: (r) => r.money, numeric: true },
  ]

  it('writes a header and CRLF-delimited, RFC 4180-quoted records that round-trip', async () => {
    const texts = [
      'plain',
      'comma, inside',
      'quote " inside',
      '"quoted"',
      'line\nfeed',
      'carriage\rreturn',
      'crlf\r\ninside',
      '',
      'ünïcödé — 日本語',
    ]
    const rows: Row[] = texts.map((text, i) => ({ text, n: i, money: '1.000000' }))
    const { out, stats } = sink()
    const result = await csvStream(rows, columns, out)
    expect(result).toEqual({ rows: texts.length })
    expect(stats.text.startsWith('text,n,money_usd\r\n')).toBe(true)
    expect(stats.text.endsWith('\r\n')).toBe(true)
    expect(stats.text).toContain('\r\n"quote "" inside",2,')
    // A lone LF or CR must be quoted too, not only the record delimiter (csv-stringify's default
    // stops quoting them once a record_delimiter is set).
    expect(stats.text).toContain('"line\nfeed"')
    expect(stats.text).toContain('"carriage\rreturn"')
    const parsed = parseCsv(stats.text)
    expect(parsed[0]).toEqual(['text', 'n', 'money_usd'])
    expect(parsed.slice(1).map((r) => r[0])).toEqual(texts)
    expect(parsed.slice(1).map((r) => r[1])).toEqual(texts.map((_, i) => String(i)))
  })

  it('neutralizes formula cells in text columns only, never numbers', async () => {
    const rows: Row[] = [
      { text: '=cmd|" /C calc"!A0', n: -3, money: '-0.500000' },
      { text: '-2+3', n: null, money: null },
      { text: '@x', n: 1.5, money: '=1+1' },
    ]
    const { out, stats } = sink()
    await csvStream(rows, columns, out)
    const parsed = parseCsv(stats.text).slice(1)
    expect(parsed).toEqual([
      [`'=cmd|" /C calc"!A0`, '-3', '-0.500000'],
      ["'-2+3", '', ''],
      ["'@x", '1.5', "'=1+1"],
    ])
  })

  it('accepts async iterables', async () => {
    async function* gen(): AsyncGenerator<Row> {
      yield { text: 'a', n: 1, money: null }
      yield { text: 'b', n: 2, money: null }
    }
    const { out, stats } = sink()
    expect(await csvStream(gen(), columns, out)).toEqual({ rows: 2 })
    expect(stats.text).toBe('text,n,money_usd\r\na,1,\r\nb,2,\r\n')
  })

  it('writes only the header for no rows', async () => {
    const { out, stats } = sink()
    expect(await csvStream([], columns, out)).toEqual({ rows: 0 })
    expect(stats.text).toBe('text,n,money_usd\r\n')
  })

  it('pulls rows only as fast as the writer takes them (backpressure)', async () => {
    const total = 50_000
    let pulled = 0
    function* rows(): Generator<Row> {
      for (let i = 0; i < total; i++) {
        pulled++
        yield { text: `row ${i} ${'x'.repeat(40)}`, n: i, money: '0.000001' }
      }
    }
    const { out, stats } = sink({ keep: false, slow: true, highWaterMark: 4 * 1024 })
    let maxAhead = 0
    stats.onChunk = () => {
      // Rows read from the source but not yet handed to the writer (one chunk per record here).
      maxAhead = Math.max(maxAhead, pulled - stats.chunks)
    }
    expect((await csvStream(rows(), columns, out)).rows).toBe(total)
    // Chunks of at most 64 KiB as the rows are read, never the file in one piece.
    expect(stats.chunks).toBeGreaterThan(500)
    // Ignoring backpressure would read all 50,000 rows before the slow writer took a few.
    expect(maxAhead).toBeLessThan(1_000)
    expect(stats.maxBuffered).toBeLessThan(64 * 1024)
  })

  it('propagates a writer error', async () => {
    const out = new Writable({
      write(_chunk, _enc, done) {
        done(new Error('disk full'))
      },
    })
    await expect(csvStream([{ text: 'a', n: 1, money: null }], columns, out)).rejects.toThrow(
      'disk full',
    )
  })
})

describe('Ledger.exportCsv', () => {
  let h: ReturnType<typeof openLedgerDb>
  let ledger: Ledger
  beforeEach(() => {
    h = openLedgerDb()
    ledger = new Ledger({ db: h.db, prices: new Prices() })
  })
  afterEach(() => h.close())

  const ev = (over: Partial<LedgerRecordInput> = {}): LedgerRecordInput => ({
    ts: Date.UTC(2026, 10, 1, 12, 0, 0),
    taskId: 1,
    batchId: 'b1',
    fp: 'fpA',
    worker: 'w1',
    taskType: 'summarize',
    provider: 'sim',
    model: 'sim-small',
    step: 1,
    usage: { inputTokens: 1_000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 100 },
    outcome: 'executed',
    latencyMs: 10,
    status: 200,
    epoch: 1,
    ...over,
  })

  it('exports events with USD money, empty unpriced cells and guarded text', async () => {
    ledger.record(ev())
    ledger.record(
      ev({
        taskId: 2,
        outcome: 'reused',
        usage: { ...ev().usage, inputTokens: 0, outputTokens: 0 },
      }),
    )
    ledger.record(
      ev({ fp: 'x', taskType: '=HYPERLINK("http://evil")', worker: 'w,"2"\n', model: 'mystery-1' }),
    )
    const { out, stats } = sink()
    expect(await ledger.exportCsv('events', out)).toEqual({ rows: 3 })
    const [header, ...rows] = parseCsv(stats.text) as [string[], ...string[][]]
    const col = (name: string): number => header.indexOf(name)
    expect(header.slice(0, 3)).toEqual(['id', 'ts', 'time_utc'])
    for (const name of ['cost_usd', 'saved_usd', 'outcome', 'price_version']) {
      expect(col(name)).toBeGreaterThan(0)
    }
    expect(rows[0]![col('cost_usd')]).toBe('0.004500')
    expect(rows[0]![col('time_utc')]).toBe('2026-11-01T12:00:00.000Z')
    expect(rows[0]![col('saved_usd')]).toBe('')
    expect(rows[1]![col('cost_usd')]).toBe('0.000000')
    expect(rows[1]![col('saved_usd')]).toBe('0.004500')
    expect(rows[2]![col('cost_usd')]).toBe('')
    expect(rows[2]![col('task_type')]).toBe(`'=HYPERLINK("http://evil")`)
    expect(rows[2]![col('worker')]).toBe('w,"2"\n')
    expect(rows.every((r) => r.length === header.length)).toBe(true)
  })

  it('exports the per-type summary with unpriced and wasted columns', async () => {
    ledger.record(ev())
    ledger.record(ev({ taskId: 2, worker: 'w2', outcome: 'duplicate' }))
    ledger.record(ev({ taskType: 'other', fp: 'o', model: 'mystery-1' }))
    const { out, stats } = sink()
    expect(await ledger.exportCsv('summary', out)).toEqual({ rows: 2 })
    const records = parse(stats.text, { columns: true }) as Record<string, string>[]
    expect(records).toHaveLength(2)
    expect(records[0]).toMatchObject({
      task_type: 'summarize',
      runs: '2',
      executed: '1',
      duplicates: '1',
      cost_usd: '0.009000',
      wasted_usd: '0.004500',
      saved_usd: '0.000000',
      unpriced_calls: '0',
    })
    expect(records[1]).toMatchObject({ task_type: 'other', cost_usd: '', unpriced_calls: '1' })
  })

  it('lets the runner keep recording while a slow export is under way', async () => {
    h.db.transaction(() => {
      for (let i = 0; i < 5_000; i++) ledger.record(ev({ fp: `fp-${i}`, taskId: i }))
    })()
    const { out, stats } = sink({ keep: false, slow: true, highWaterMark: 1024 })
    let recordedDuringExport = 0
    stats.onChunk = () => {
      // The export writes chunks of 64 KiB (some 400 records): record at every other one.
      if (stats.chunks % 2 === 0) {
        ledger.record(ev({ fp: `late-${stats.chunks}`, taskId: 99_999 }))
        recordedDuringExport++
      }
    }
    // The export is a snapshot of the ledger when it started: rows recorded meanwhile are not in it.
    expect(await ledger.exportCsv('events', out)).toEqual({ rows: 5_000 })
    expect(recordedDuringExport).toBeGreaterThanOrEqual(3)
    expect(ledger.totals().executed).toBe(5_000 + recordedDuringExport)
  })

  it('rejects an unknown export kind', async () => {
    await expect(ledger.exportCsv('all' as never, sink().out)).rejects.toThrow(/kind.*"all"/)
  })

  it('streams 200k rows in flat memory, in many chunks', async () => {
    const total = 200_000
    h.db.transaction(() => {
      for (let i = 0; i < total; i++) {
        ledger.record(
          ev({ ts: 1_700_000_000_000 + i, fp: `fp-${i % 5_000}`, taskId: i, step: 1 + (i % 10) }),
        )
      }
    })()
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc') as () => void
    gc()
    const baseline = process.memoryUsage().heapUsed
    let peakLive = 0
    const { out, stats } = sink({ keep: false, slow: true })
    stats.onChunk = () => {
      // Live heap (after a full GC) while the export is under way: what it actually holds on to.
      if (stats.chunks % 50 === 0) {
        gc()
        peakLive = Math.max(peakLive, process.memoryUsage().heapUsed - baseline)
      }
    }
    const result = await ledger.exportCsv('events', out)
    expect(result.rows).toBe(total)
    // Chunks of at most 64 KiB as the rows are read, never the file in one piece.
    expect(stats.chunks).toBeGreaterThan(500)
    expect(peakLive).toBeGreaterThan(0)
    // The CSV is ~40 MB and the rows as objects far more; an export buffering either fails here.
    expect(peakLive).toBeLessThan(16 * 1024 * 1024)
    expect(stats.bytes).toBeGreaterThan(total * 100)
  })
})
