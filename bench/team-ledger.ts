// `npm run bench:team-ledger`: team mode's ledger stream on a real redis-server on loopback
// (started here). How fast one database's rows go into the stream (the appender: pages of local
// rows, their execution deltas, pipelined Lua appends), and how fast `pacer summary --store` and
// `pacer export --store` read them back (XRANGE pages, rolled up or written as CSV), with the
// export's peak memory: it streams, so it must stay flat however many rows there are.
//
//   node bin/run-ts.cjs bench/team-ledger.ts [N]   N ledger rows (default 100000)
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { openDatabase } from '../src/main/engine/db'
import { connectTeamStore } from '../src/main/engine/team/connect'
import { parseStoreUrl } from '../src/main/engine/team/store-url'
import { LedgerAppender } from '../src/main/engine/team/ledger/appender'
import { databaseId } from '../src/main/engine/team/ledger/source'
import { teamCsv, teamRollup } from '../src/main/engine/team/ledger/team-read'
import { startRedis } from '../test/helpers/redis'
import { recordRows } from '../test/helpers/team-ledger'

const N = Number(process.argv[2] ?? 100_000)

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000).toLocaleString('en-US')

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pacer-bench-team-ledger-'))
  const redis = await startRedis()
  const file = join(dir, 'pacer.db')
  const db = openDatabase(file)
  db.transaction(() => recordRows(db, N, 1, undefined, 3))()
  const reader = openDatabase(file, { readOnly: true })
  const team = await connectTeamStore(parseStoreUrl(redis.url, 'bench'))
  try {
    const appender = new LedgerAppender({
      db: reader,
      stream: team.ledger,
      machine: 'bench',
      source: `bench/${databaseId(db)}`,
    })
    let t = performance.now()
    await appender.flush()
    const appendMs = performance.now() - t
    if ((await team.ledger.length()) !== N) throw new Error('not every row was appended')
    console.log(`team ledger, ${N.toLocaleString('en-US')} rows, redis-server on loopback`)
    console.log(`  append (appender into the stream)   ${rate(N, appendMs).padStart(9)} rows/s`)

    t = performance.now()
    const rollup = await teamRollup(team.ledger)
    const rollupMs = performance.now() - t
    if (rollup.rows !== N) throw new Error(`summary read ${rollup.rows} rows`)
    console.log(`  summary --store (roll up pages)     ${rate(N, rollupMs).padStart(9)} rows/s`)

    let peak = process.memoryUsage().rss
    const before = peak
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
    t = performance.now()
    const { rows } = await teamCsv(team.ledger, 'events', createWriteStream(join(dir, 'team.csv')))
    const exportMs = performance.now() - t
    clearInterval(sample)
    if (rows !== N) throw new Error(`export wrote ${rows} rows`)
    console.log(
      `  export --store (events CSV)         ${rate(N, exportMs).padStart(9)} rows/s, ` +
        `peak RSS +${Math.round((peak - before) / 1e6)} MB`,
    )
  } finally {
    await team.close()
    reader.close()
    db.close()
    await redis.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

void main()
