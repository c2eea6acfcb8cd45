import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCommand } from './run'
import { summaryCommand } from './ledger-commands'
import { say } from './terminal-text'
import { packageRoot } from './package-root'

const DEMO_FILE = join(packageRoot(), 'resources/examples/demo.jsonl')

/** `pacer demo` (`npm run demo`): the bundled batch on the simulated provider, then the summary. */
export async function demoCommand(opts: { db?: string }): Promise<number> {
  const db = opts.db ?? join(mkdtempSync(join(tmpdir(), 'pacer-demo-')), 'pacer.db')
  say.err(
    `Running ${DEMO_FILE} on the simulated provider (capacity 6, so AIMD meets 429s),\n` +
      `with duplicates and multi-step agents. Ledger: ${db}\n\n`,
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
    `\nSee it in the console: npx pacer serve --db ${db}\nCSV for finance:       npx pacer export --db ${db} --out spend.csv\n`,
  )
  return code
}
