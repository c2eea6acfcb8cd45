// The team ledger end to end with real processes: two `pacer run --store` on two databases (two
// machines) against one loopback provider and one redis-server, then `pacer summary --store` and
// `pacer export --store` read the team's spend: the sums of the machines' own summaries, one CSV
// line per local row with its machine.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runOnVendor, runPacer, tempDir } from '../../helpers/cli'
import { closeVendors, fakeVendor, vendorDatabase } from '../../helpers/fake-vendor'
import { startRedis, type RedisServer } from '../../helpers/redis'

// A local model server: a refusal takes a moment (and holds capacity), retry after 100 ms.
const LOCAL = { refuseAfterMs: 20, retryAfterMs: 100 }

const servers: RedisServer[] = []
afterEach(async () => {
  await closeVendors()
  await Promise.all(servers.splice(0).map((r) => r.close()))
})

interface Rollup {
  taskType: string
  runs: number
  executed: number
  reused: number
  costMicros: number | null
  totalTokens: number
}

/** A batch of two task types, with duplicates (reused once the first one is done). */
function tasks(dir: string, name: string, n: number): string {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      type: i % 3 === 0 ? 'translate' : 'classify',
      payload: { prompt: `${name}-${i % Math.ceil(n * 0.8)}` },
    }),
  )
  const file = join(dir, `${name}.jsonl`)
  writeFileSync(file, `${lines.join('\n')}\n`)
  return file
}

describe('team ledger: pacer run --store on two machines, then summary and export --store', () => {
  it('the team summary adds up the machines, the export has each of their rows with its machine', async () => {
    const root = tempDir('pacer-team-ledger-')
    const provider = await fakeVendor({ capacity: 8, latencyMs: 5, ...LOCAL })
    const r = await startRedis()
    servers.push(r)
    const machines = [
      { name: 'alpha', n: 60 },
      { name: 'beta', n: 45 },
    ].map((m) => {
      const dir = join(root, m.name)
      mkdirSync(dir)
      return {
        ...m,
        db: vendorDatabase(dir, provider),
        file: tasks(dir, m.name, m.n),
      }
    })
    const runs = await Promise.all(
      machines.map(
        (m) => runOnVendor(m.file, m.db, ['--store', r.url], { PACER_MACHINE: m.name }).done,
      ),
    )
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toContain("the ledger's rows are appended there too")
    }

    const local = await Promise.all(
      machines.map(async (m) => {
        const s = await runPacer(['summary', '--db', m.db, '--json'])
        expect(s.code, s.stderr).toBe(0)
        return (JSON.parse(s.stdout) as { byType: Rollup[] }).byType
      }),
    )
    const team = await runPacer(['summary', '--store', r.url, '--json'])
    expect(team.code, team.stderr).toBe(0)
    const view = JSON.parse(team.stdout) as {
      byType: Rollup[]
      byMachine: (Rollup & { machine: string })[]
      machines: string[]
      rows: number
    }
    expect(view.machines).toEqual(['alpha', 'beta'])
    for (const [i, m] of machines.entries()) {
      const mine = view.byMachine.filter((x) => x.machine === m.name)
      expect(mine.map(({ machine: _m, ...x }) => x)).toEqual(
        expect.arrayContaining(local[i]!.map((x) => expect.objectContaining(x))),
      )
      expect(mine).toHaveLength(local[i]!.length)
    }
    for (const t of view.byType) {
      const parts = local.flatMap((l) => l.filter((x) => x.taskType === t.taskType))
      for (const k of ['runs', 'executed', 'reused', 'costMicros', 'totalTokens'] as const) {
        expect(t[k] ?? 0, `${t.taskType} ${k}`).toBe(parts.reduce((n, x) => n + (x[k] ?? 0), 0))
      }
    }
    expect(view.byType.reduce((n, t) => n + t.reused, 0)).toBeGreaterThan(0)

    const text = await runPacer(['summary', '--store', r.url])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/team ledger at redis:\/\/127\.0\.0\.1:\d+\/0: \d+ row\(s\) from 2/)
    expect(text.stdout).toMatch(/by machine:\ntask type +machine/)

    const exported = await runPacer(['export', '--store', r.url, '--out', '-'])
    expect(exported.code, exported.stderr).toBe(0)
    const lines = exported.stdout.trimEnd().split('\r\n')
    expect(lines[0]).toMatch(/^machine,source,id,/)
    for (const m of machines) {
      const own = await runPacer(['export', '--db', m.db, '--out', '-'])
      const ownRows = own.stdout.trimEnd().split('\r\n').length - 1
      expect(lines.filter((l) => l.startsWith(`${m.name},`))).toHaveLength(ownRows)
    }
    expect(lines.length - 1).toBe(view.rows)
    expect(exported.stderr).toContain(`wrote ${view.rows} team events row(s) to stdout`)

    // A store nobody listens on: one line, exit 3, as for run.
    const gone = await runPacer(['summary', '--store', 'redis://127.0.0.1:1/0'])
    expect(gone.code).toBe(3)
    expect(gone.stderr).toMatch(/team store 127\.0\.0\.1:1 unreachable/)
  })
})
