import { join } from 'node:path'
import { defaultDbPath } from '../engine'
import { runCommand } from './run'
import { summaryCommand } from './ledger-commands'
import { dbPathFrom } from './common'
import { say } from './terminal-text'
import { packageRoot } from './package-root'

const DEMO_FILE = join(packageRoot(), 'resources/examples/demo.jsonl')

/**
 * `pacer demo` (`npm run demo`): the bundled batch on the simulated provider, then the summary. It
 * writes to the database every other command and the console use by default (--db, $PACER_DB,
 * else the desktop app's), so `pacer batches`, `pacer summary`, `npm start` and `pacer serve` show
 * it afterwards without a flag.
 */
export async function demoCommand(opts: { db?: string }): Promise<number> {
  const db = dbPathFrom(opts.db)
  const isDefault = opts.db === undefined && db === defaultDbPath()
  const dbFlag = opts.db === undefined ? '' : ` --db ${db}`
  say.err(
    `Running ${DEMO_FILE} on the simulated provider (capacity 6, so AIMD meets 429s),\n` +
      `with duplicates and multi-step agents.\n` +
      `Ledger: ${db}\n` +
      (isDefault
        ? '  (the default database: pacer batches, pacer summary, npm start and pacer serve read it)\n\n'
        : `  (pacer batches${dbFlag}, pacer summary${dbFlag} and pacer serve${dbFlag} read it)\n\n`),
  )
  const code = await runCommand(DEMO_FILE, {
    db,
    provider: 'sim',
    simCapacity: 6,
    simLatencyScale: 1,
    lease: 30,
  })
  say.out('\nSpend per task type (pacer summary):\n')
  await summaryCommand({ db })
  say.out(
    `\nSee it in the console: ${isDefault ? 'npm start (desktop) or ' : ''}npx pacer serve${dbFlag}\n` +
      `CSV for finance:       npx pacer export${dbFlag} --out spend.csv\n` +
      `Your own batch:        npx pacer run FILE.jsonl${dbFlag} (one JSON task per line; docs/batch-files.md)\n` +
      'Run the demo again and its tasks reuse the stored answers: $0, nothing sent twice.\n',
  )
  return code
}
