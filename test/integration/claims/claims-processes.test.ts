import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SqliteClaimStore } from '../../../src/main/engine/claims/claims'
import { openDatabase } from '../../../src/main/engine/db'
import { MIGRATIONS } from '../../../src/main/engine/db/migrations'
import { fingerprint } from '../../../src/main/engine/core/fingerprint'
import type { ClaimAttempt } from '../../../src/main/engine/core/types'

const ROOT = path.resolve(__dirname, '../../..')
const CHILD = 'test/helpers/claims-child.ts'

interface Message {
  event: string
  [key: string]: unknown
}

interface Child {
  next(event: string): Promise<Message>
  tell(command: string): void
  exitCode: Promise<number | null>
}

const started: ChildProcess[] = []

/** A helper process; next() resolves with its next message of that kind. */
function startChild(args: string[], script = CHILD): Child {
  const proc = spawn(process.execPath, ['bin/run-ts.cjs', script, ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  started.push(proc)
  let stderr = ''
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const inbox: Message[] = []
  const readers: { event: string; resolve: (m: Message) => void }[] = []
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Message
    const i = readers.findIndex((r) => r.event === message.event)
    if (i >= 0) readers.splice(i, 1)[0]!.resolve(message)
    else inbox.push(message)
  })
  const exitCode = new Promise<number | null>((resolve) => proc.on('close', resolve))
  return {
    next(event) {
      const i = inbox.findIndex((m) => m.event === event)
      if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0]!)
      return new Promise((resolve, reject) => {
        readers.push({ event, resolve })
        void exitCode.then((code) =>
          reject(new Error(`child exited (${code}) before '${event}':\n${stderr}`)),
        )
      })
    },
    tell(command) {
      proc.stdin.write(`${command}\n`)
    },
    exitCode,
  }
}

let dir: string
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pacer-claims-proc-'))
})
afterEach(() => {
  // A failed assertion can leave a child waiting for a command that will never come.
  for (const proc of started.splice(0)) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill()
  }
  rmSync(dir, { recursive: true, force: true })
})

describe('database across real processes', () => {
  it('6 processes opening one brand-new file at the same moment all migrate it once', async () => {
    const dbPath = path.join(dir, 'fresh', 'pacer.db')
    const children = Array.from({ length: 6 }, () =>
      startChild([dbPath], 'test/helpers/open-db-child.ts'),
    )
    await Promise.all(children.map((c) => c.next('ready')))
    for (const c of children) c.tell('go')
    const results = await Promise.all(
      children.map((c) => Promise.race([c.next('opened'), c.next('failed')])),
    )
    const latest = MIGRATIONS.at(-1)!.version
    expect(results).toEqual(children.map(() => ({ event: 'opened', version: latest })))
    const db = openDatabase(dbPath)
    // Every migration applied exactly once, however many processes raced to open the new file.
    expect(db.prepare('SELECT version FROM migrations').all()).toEqual(
      MIGRATIONS.map((m) => ({ version: m.version })),
    )
    db.close()
  })
})

describe('claims across real processes', () => {
  it('4 processes racing on 300 fingerprints of a brand-new file complete each exactly once', async () => {
    const dbPath = path.join(dir, 'race', 'pacer.db')
    const count = 300
    // Nobody creates the file first: the children also race to create and migrate it.
    const children = ['w1', 'w2', 'w3', 'w4'].map((w) =>
      startChild(['race', dbPath, w, `${count}`, '1']),
    )
    await Promise.all(children.map((c) => c.next('ready')))
    for (const c of children) c.tell('go')
    const reports = await Promise.all(children.map((c) => c.next('done')))
    expect(await Promise.all(children.map((c) => c.exitCode))).toEqual([0, 0, 0, 0])

    const ownedBy = new Map<string, string>()
    let ownedTotal = 0
    for (const r of reports) {
      expect(r['completeFailures']).toBe(0)
      expect(r['unexpected']).toEqual([])
      for (const fp of r['owned'] as string[]) {
        ownedTotal++
        ownedBy.set(fp, r['worker'] as string)
      }
    }
    expect(ownedTotal).toBe(count)
    expect(ownedBy.size).toBe(count)
    // The race must have been a race: several owners, and some claims found busy and waited on.
    expect(new Set(ownedBy.values()).size).toBeGreaterThan(1)
    expect(reports.reduce((n, r) => n + (r['waited'] as number), 0)).toBeGreaterThan(0)

    const db = openDatabase(dbPath)
    try {
      const rows = db.prepare('SELECT fp, state, owner, epoch, result FROM claims').all() as {
        fp: string
        state: string
        owner: string
        epoch: number
        result: string
      }[]
      expect(rows).toHaveLength(count)
      for (const row of rows) {
        expect(row.state).toBe('completed')
        expect(row.epoch).toBe(1)
        expect(row.owner).toBe(ownedBy.get(row.fp))
        expect(JSON.parse(row.result)).toMatchObject({ by: row.owner })
      }
      const expected = new Set(Array.from({ length: count }, (_, i) => fingerprint('race', { i })))
      expect(new Set(rows.map((r) => r.fp))).toEqual(expected)
      expect(db.prepare('SELECT version FROM migrations').all()).toEqual(
        MIGRATIONS.map((m) => ({ version: m.version })),
      )
    } finally {
      db.close()
    }
  })

  it('a stalled owner in another process is taken over and cannot complete late', async () => {
    const dbPath = path.join(dir, 'pacer.db')
    const db = openDatabase(dbPath)
    try {
      const store = new SqliteClaimStore({ db, pollMinMs: 5, pollMaxMs: 50 })
      const fp = fingerprint('stale', { n: 1 })
      const a = startChild(['stale', dbPath, 'A', fp, '300'])
      const claimed = await a.next('claimed')
      expect(claimed['attempt']).toEqual({ kind: 'owned', epoch: 1, tookOver: false })
      expect(store.claim(fp, 'B', 10_000).kind).toBe('busy')

      // B waits in this process on the real clock; only A's lease running out can end the wait.
      const outcome = await store.wait(fp, 'B', { timeoutMs: 10_000, leaseMs: 10_000 })
      expect(outcome).toEqual({
        kind: 'owned',
        epoch: 2,
        tookOver: true,
        previousOwner: 'A',
        previousEpoch: 1,
      })
      expect(store.complete(fp, 2, JSON.stringify({ by: 'B' }), 'succeeded')).toBe(true)

      a.tell('complete')
      const late = await a.next('completed')
      expect(late).toMatchObject({ ok: false, renewed: false })
      expect(await a.exitCode).toBe(0)
      expect(store.getResult(fp)).toMatchObject({ owner: 'B', epoch: 2, result: '{"by":"B"}' })
    } finally {
      db.close()
    }
  })

  it('a waiter in this process sees another process complete by polling', async () => {
    const dbPath = path.join(dir, 'pacer.db')
    const db = openDatabase(dbPath)
    try {
      const store = new SqliteClaimStore({ db, pollMinMs: 5, pollMaxMs: 50 })
      const fp = fingerprint('poll', { n: 2 })
      const a = startChild(['stale', dbPath, 'A', fp, '60000'])
      const claimed = (await a.next('claimed'))['attempt'] as ClaimAttempt
      expect(claimed.kind).toBe('owned')
      const waiting = store.wait(fp, 'B', { timeoutMs: 20_000, leaseMs: 10_000 })
      a.tell('complete')
      expect(await a.next('completed')).toMatchObject({ ok: true, renewed: true })
      const outcome = await waiting
      expect(outcome).toMatchObject({ kind: 'completed', result: { owner: 'A', epoch: 1 } })
      expect(await a.exitCode).toBe(0)
    } finally {
      db.close()
    }
  })
})
