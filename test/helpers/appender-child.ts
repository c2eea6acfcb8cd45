// A team ledger appender in a process of its own, for test/unit/engine/team-ledger: args DB URL
// PREFIX. Prints {event:'ready'} once connected and appending; on `stop` (stdin) flushes, prints
// {event:'done', appended} and exits.
import { createInterface } from 'node:readline'
import { openDatabase } from '../../src/main/engine/db'
import { connectTeamStore } from '../../src/main/engine/team/connect'
import { parseStoreUrl } from '../../src/main/engine/team/store-url'
import { LedgerAppender } from '../../src/main/engine/team/ledger/appender'
import { databaseId } from '../../src/main/engine/team/ledger/source'

const [file, url, prefix] = process.argv.slice(2) as [string, string, string]

async function main(): Promise<void> {
  const db = openDatabase(file, { readOnly: true })
  const team = await connectTeamStore(parseStoreUrl(url, 'test'), { prefix })
  const appender = new LedgerAppender({
    db,
    stream: team.ledger,
    machine: 'one',
    source: `one/${databaseId(db)}`,
    intervalMs: 2,
    batchRows: 40,
    pipeline: 2,
  })
  appender.start()
  process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`)
  const lines = createInterface({ input: process.stdin })
  for await (const line of lines) {
    if (line.trim() !== 'stop') continue
    await appender.stop()
    process.stdout.write(`${JSON.stringify({ event: 'done', appended: appender.appended })}\n`)
    await team.close()
    db.close()
    process.exit(0)
  }
}

void main()
