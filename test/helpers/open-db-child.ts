// For test/integration/claims-processes.test.ts: loads everything, prints {event:'ready'}, and only
// on `go` (stdin) opens the database, so several processes open a brand-new file at one moment.
// Prints {event:'opened', version} or {event:'failed', message}.
import { createInterface } from 'node:readline'
import { openDatabase } from '../../src/main/engine/db'

const lines = createInterface({ input: process.stdin })
process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`)
lines.once('line', () => {
  lines.close()
  try {
    const db = openDatabase(process.argv[2]!)
    const row = db.prepare('SELECT MAX(version) AS version FROM migrations').get() as object
    db.close()
    process.stdout.write(`${JSON.stringify({ event: 'opened', ...row })}\n`)
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ event: 'failed', message: String(err) })}\n`)
  }
})
