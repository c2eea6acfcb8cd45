// A worker process for test/integration/claims-processes.test.ts. It talks JSON lines on stdout
// and takes one-word commands on stdin, so the parent decides when it acts (no sleeps):
//
//   race  DB WORKER COUNT WORK_MS  open DB (maybe brand new), print {event:'ready'}, wait for
//                          `go`, then claim fingerprints 0..COUNT-1, "run" each owned one for
//                          WORK_MS (so the processes overlap) and complete it, waiting on busy ones;
//                          print {event:'done', owned, ...}
//   stale DB WORKER FP LEASE_MS  claim FP with a short lease, print {event:'claimed'}, stall until
//                          `complete`, then try to complete late; print {event:'completed', ok}
import { createInterface } from 'node:readline'
import { SqliteClaimStore } from '../../src/main/engine/claims/claims'
import { openDatabase } from '../../src/main/engine/db'
import { fingerprint } from '../../src/main/engine/core/fingerprint'

const [mode, dbPath, worker, ...rest] = process.argv.slice(2)

function send(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}

const commands = createInterface({ input: process.stdin })
const pending: string[] = []
const waiters: ((line: string) => void)[] = []
commands.on('line', (line) => {
  const waiter = waiters.shift()
  if (waiter) waiter(line.trim())
  else pending.push(line.trim())
})

function command(): Promise<string> {
  const line = pending.shift()
  if (line !== undefined) return Promise.resolve(line)
  return new Promise((resolve) => waiters.push(resolve))
}

async function race(count: number, workMs: number): Promise<void> {
  const db = openDatabase(dbPath!)
  const store = new SqliteClaimStore({ db, pollMinMs: 2, pollMaxMs: 20 })
  send({ event: 'ready', pid: process.pid })
  if ((await command()) !== 'go') throw new Error('expected go')

  const owned: string[] = []
  let completeFailures = 0
  let reused = 0
  let waited = 0
  const unexpected: string[] = []
  for (let i = 0; i < count; i++) {
    const fp = fingerprint('race', { i })
    const attempt = store.claim(fp, worker!, 30_000)
    if (attempt.kind === 'owned') {
      await new Promise((resolve) => setTimeout(resolve, workMs))
      if (store.complete(fp, attempt.epoch, JSON.stringify({ by: worker, i }), 'succeeded')) {
        owned.push(fp)
      } else {
        completeFailures++
      }
    } else if (attempt.kind === 'completed') {
      reused++
    } else {
      waited++
      const outcome = await store.wait(fp, worker!, { timeoutMs: 20_000, leaseMs: 30_000 })
      if (outcome.kind !== 'completed') unexpected.push(`${i}: ${outcome.kind}`)
    }
  }
  send({ event: 'done', worker, owned, completeFailures, reused, waited, unexpected })
  db.close()
}

async function stale(fp: string, leaseMs: number): Promise<void> {
  const db = openDatabase(dbPath!)
  const store = new SqliteClaimStore({ db })
  const attempt = store.claim(fp, worker!, leaseMs)
  send({ event: 'claimed', attempt })
  if ((await command()) !== 'complete') throw new Error('expected complete')
  if (attempt.kind !== 'owned') throw new Error(`expected to own ${fp}, got ${attempt.kind}`)
  const renewed = store.renew(fp, attempt.epoch, leaseMs)
  const ok = store.complete(fp, attempt.epoch, JSON.stringify({ by: worker }), 'succeeded')
  send({ event: 'completed', ok, renewed })
  db.close()
}

const run =
  mode === 'race'
    ? race(Number(rest[0]), Number(rest[1]))
    : mode === 'stale'
      ? stale(rest[0]!, Number(rest[1]))
      : Promise.reject(new Error(`unknown mode ${String(mode)}`))

run.then(
  () => {
    commands.close()
  },
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  },
)
