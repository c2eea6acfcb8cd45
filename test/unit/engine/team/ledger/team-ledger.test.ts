// The team ledger on a real redis-server and real SQLite files: several databases (machines)
// append their rows to one stream; the team's summary is the sum of the local ones and its export
// one line per local row; an outage loses nothing and doubles nothing; a server restarted empty
// gets every row again.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { PassThrough } from 'node:stream'
import { text } from 'node:stream/consumers'
import type Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../../src/main/engine/db'
import { Ledger } from '../../../../../src/main/engine/ledger/ledger'
import { connectTeamStore, type TeamStore } from '../../../../../src/main/engine/team/connect'
import { Prices } from '../../../../../src/main/engine/pricing/prices'
import { parseStoreUrl } from '../../../../../src/main/engine/team/store-url'
import { LedgerAppender } from '../../../../../src/main/engine/team/ledger/appender'
import { databaseId } from '../../../../../src/main/engine/team/ledger/source'
import { teamCsv, teamRollup } from '../../../../../src/main/engine/team/ledger/team-read'
import { openLedgerDb } from '../../../../helpers/ledger-db'
import { startRedis, type RedisServer } from '../../../../helpers/redis'
import { additive, recordRows, sumPerType } from '../../../../helpers/team-ledger'
import { until } from '../../../../helpers/until'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function redis(persist = false): Promise<RedisServer> {
  const r = await startRedis({ persist })
  cleanups.push(() => r.close())
  return r
}

async function team(r: RedisServer, prefix: string): Promise<TeamStore> {
  const t = await connectTeamStore(parseStoreUrl(r.url, 'test'), { prefix })
  cleanups.push(() => t.close())
  return t
}

/** A machine: its database, a read-only connection for its appender, and its local reads. */
function machine(name: string, t: TeamStore, opts: { intervalMs?: number } = {}) {
  const h = openLedgerDb()
  const reader = openDatabase(h.file, { readOnly: true })
  const statuses: string[] = []
  const appender = new LedgerAppender({
    db: reader,
    stream: t.ledger,
    machine: name,
    source: `${name}/${databaseId(h.db)}`,
    batchRows: 100,
    pipeline: 3,
    intervalMs: opts.intervalMs ?? 20,
    onStatus: (s) => statuses.push(s.message),
    onWarning: (m) => statuses.push(m),
  })
  const ledger = new Ledger({ db: h.db, prices: new Prices() })
  cleanups.push(async () => {
    await appender.stop()
    await ledger.close()
    reader.close()
    h.close()
  })
  return { name, db: h.db, appender, ledger, statuses }
}

async function csvOf(t: TeamStore, kind: 'events' | 'summary'): Promise<string[]> {
  const out = new PassThrough()
  const [csv] = await Promise.all([text(out), teamCsv(t.ledger, kind, out)])
  return csv.trimEnd().split('\r\n')
}

async function localCsv(ledger: Ledger): Promise<string[]> {
  const out = new PassThrough()
  const [csv] = await Promise.all([text(out), ledger.exportCsv('events', out)])
  return csv.trimEnd().split('\r\n').slice(1)
}

async function xlen(t: TeamStore): Promise<number> {
  return Number(await t.ledger.length())
}

/** The team's rollup holds each machine's local one, and their sum per task type. */
async function expectWhole(t: TeamStore, machines: ReturnType<typeof machine>[]) {
  const view = await teamRollup(t.ledger)
  const locals = machines.map((m) => m.ledger.rollupByType())
  for (const [i, m] of machines.entries()) {
    const mine = view.byMachine.filter((r) => r.machine === m.name)
    const local = locals[i]!
    expect(new Map(mine.map(({ machine: _m, ...r }) => [r.taskType, r]))).toEqual(
      new Map(local.map((r) => [r.taskType, r])),
    )
  }
  const summed = sumPerType(locals)
  expect(new Map(view.byType.map((r) => [r.taskType, additive(r)]))).toEqual(summed)
  expect(view.rows).toBe(machines.reduce((n, m) => n + count(m), 0))
  return view
}

const count = (m: { db: Database.Database }) =>
  m.db.prepare('SELECT COUNT(*) FROM ledger_rows').pluck().get() as number

const prefix = () => `t${randomBytes(4).toString('hex')}:`

describe('team ledger', () => {
  it('three machines: the team summary is the sum of the local ones, the export one line per row', async () => {
    const t = await team(await redis(), prefix())
    const machines = ['m1', 'm2', 'm3'].map((n) => machine(n, t, { intervalMs: 60_000 }))
    for (const [i, m] of machines.entries()) recordRows(m.db, 700 + i * 150, 11 + i)
    await Promise.all(machines.map((m) => m.appender.flush()))
    expect(machines.map((m) => m.appender.waiting)).toEqual([0, 0, 0])

    const view = await expectWhole(t, machines)
    expect(view.machines).toEqual(['m1', 'm2', 'm3'])
    // Duplicates that turned, lost answers and unpriced calls are all in the mix.
    expect(view.totals.duplicates).toBeGreaterThan(0)
    expect(view.totals.wastedMicros).toBeGreaterThan(0)
    expect(view.totals.unpricedCalls).toBeGreaterThan(0)

    const lines = await csvOf(t, 'events')
    expect(lines[0]).toMatch(/^machine,source,id,ts,time_utc,/)
    for (const m of machines) {
      // Each local row once, with its machine and source, cell for cell as the local export has it.
      const source = `${m.name}/${databaseId(m.db)}`
      const mine = lines.slice(1).filter((l) => l.startsWith(`${m.name},`))
      expect(mine.map((l) => l.slice(`${m.name},${source},`.length))).toEqual(
        await localCsv(m.ledger),
      )
    }
    expect(lines.length - 1).toBe(machines.reduce((n, m) => n + count(m), 0))

    const summary = await csvOf(t, 'summary')
    expect(summary[0]).toMatch(/^machine,task_type,runs,/)
    expect(summary.length - 1).toBe(view.byMachine.length)
  })

  it('Redis stopped mid-run and started again: the rows waited, none lost, none doubled', async () => {
    const r = await redis(true)
    const t = await team(r, prefix())
    const [a, b] = [machine('a', t), machine('b', t)]
    a.appender.start()
    b.appender.start()
    recordRows(a.db, 300, 1)
    recordRows(b.db, 250, 2)
    await until(() => a.appender.waiting === 0 && b.appender.waiting === 0)
    await r.stop()
    recordRows(a.db, 400, 3, 1_800_000_000_000)
    recordRows(b.db, 120, 4, 1_800_000_000_000)
    await until(() =>
      a.statuses.some((s) => /^ledger: \d+ row\(s\) waiting for the team store/.test(s)),
    )
    expect(a.appender.waiting).toBe(400)
    await r.start()
    await until(() => a.appender.waiting === 0 && b.appender.waiting === 0)
    expect(a.statuses.at(-1)).toMatch(/every row is in the team store again/)
    expect(await xlen(t)).toBe(count(a) + count(b))
    await expectWhole(t, [a, b])
  })

  it('Redis restarted empty (no persistence): every source appends again, the summary is whole', async () => {
    const r = await redis(false)
    const t = await team(r, prefix())
    const [a, b] = [machine('a', t), machine('b', t)]
    a.appender.start()
    b.appender.start()
    recordRows(a.db, 500, 5)
    recordRows(b.db, 200, 6)
    await until(() => a.appender.waiting === 0 && b.appender.waiting === 0)
    await r.stop()
    await r.start()
    recordRows(a.db, 50, 7, 1_800_000_000_000)
    await until(async () => (await xlen(t)) === count(a) + count(b))
    expect(a.statuses.join('\n')).toMatch(/lost this database's rows .* appending all 550 again/)
    // b had nothing new to append: it noticed all the same.
    expect(b.statuses.join('\n')).toMatch(/lost this database's rows .* appending all 200 again/)
    await expectWhole(t, [a, b])
  })

  it('two processes on one database: no row appended twice', async () => {
    const r = await redis()
    const p = prefix()
    const t = await team(r, p)
    const h = openLedgerDb()
    cleanups.push(() => h.close())
    const children = [0, 1].map(() => appenderChild(h.file, r.url, p))
    await Promise.all(children.map((c) => c.ready))
    for (let i = 0; i < 10; i++) recordRows(h.db, 150, 20 + i, 1_700_000_000_000 + i * 200_000)
    const done = await Promise.all(children.map((c) => c.stop()))
    const rows = count({ db: h.db })
    expect(await xlen(t)).toBe(rows)
    expect(done[0]! + done[1]!).toBe(rows)
    const ids = new Set<number>()
    for (let after = '-'; ;) {
      const page = await t.ledger.page(after, '+', 1000)
      for (const [, f] of page) ids.add(Number(f[f.indexOf('row') + 1]))
      if (page.length < 1000) break
      after = page.at(-1)![0]
    }
    expect(ids.size).toBe(rows)
  })
})

/** A `LedgerAppender` in a process of its own on the database (test/helpers/appender-child.ts). */
function appenderChild(file: string, url: string, prefix: string) {
  const child = spawn(
    process.execPath,
    ['bin/run-ts.cjs', 'test/helpers/appender-child.ts', file, url, prefix],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  cleanups.push(() => child.kill('SIGKILL'))
  const lines = createInterface({ input: child.stdout })
  const next = () =>
    new Promise<{ event: string; appended?: number }>((resolve) =>
      lines.once('line', (l) => resolve(JSON.parse(l) as { event: string })),
    )
  const ready = next()
  return {
    ready,
    async stop(): Promise<number> {
      const done = next()
      child.stdin.write('stop\n')
      return (await done).appended ?? -1
    },
  }
}
