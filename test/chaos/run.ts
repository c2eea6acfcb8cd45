/**
 * `npm run chaos [-- --seed N --seconds S --tasks N --processes P]`: several `pacer run` processes
 * and a console (`pacer serve`) on one database against a loopback provider that throttles, fails,
 * hangs and drops connections; processes killed with SIGKILL and SIGINT at random and restarted;
 * the database's write lock held by another program for a while; the disk filled up and freed;
 * exports aimed at the database, agent modules that exit or hang at load and runs on a team store
 * that accepts and never answers (hostile.ts).
 * Then the faults stop, every file is run to the end, and the database is checked against what the
 * provider served (checks.ts). Seeded: the same seed draws the same tasks, faults and schedule.
 * Exit 0 when every check holds, 1 otherwise.
 */
import { copyFileSync, existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openDatabase } from '../../src/main/engine/db'
import { SettingsStore } from '../../src/main/engine/settings/settings'
import { tempDir } from '../helpers/cli'
import { seededRandom } from '../helpers/random'
import { checkDatabase, formatChecks } from './checks'
import { startConsole } from './console'
import { prepareDisk, holdWriteLock, type Disk } from './faults'
import { silentServer, type SilentServer } from '../helpers/silent-server'
import {
  exportAtDatabase,
  hostileAgentRun,
  hostileTally,
  stalledStoreRun,
  STALL_BOUND_MS,
  type HostileTally,
} from './hostile'
import { startChaosProvider, type ChaosProvider } from './provider'
import { Worker } from './worker'

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '60' },
    tasks: { type: 'string', default: '500' },
    processes: { type: 'string', default: '3' },
  },
})
const seed = Number(values.seed)
const seconds = Number(values.seconds)
const tasksPerFile = Number(values.tasks)
const processes = Number(values.processes)

/** The files: each its own lines, with payloads drawn from one pool (duplicates in and across). */
function writeFiles(dir: string, random: () => number): { files: string[]; distinct: number } {
  const pool = Math.round(tasksPerFile * processes * 0.6)
  const used = new Set<number>()
  const files = Array.from({ length: processes }, (_, p) => {
    const lines = Array.from({ length: tasksPerFile }, () => {
      const n = Math.floor(random() * pool)
      used.add(n)
      // One task in ten has three steps, one in forty ten: calls between steps are killed too.
      const steps = n % 40 === 0 ? 10 : n % 10 === 0 ? 3 : 1
      return JSON.stringify({ type: `kind${n % 4}`, payload: { text: `item ${n}` }, steps })
    })
    const file = join(dir, `batch-${p + 1}.jsonl`)
    writeFileSync(file, lines.join('\n') + '\n')
    return file
  })
  return { files, distinct: used.size }
}

type Fault = 'sigkill' | 'sigint' | 'lock' | 'disk' | 'export' | 'agent' | 'store'

function pickFault(random: () => number, disk: Disk): Fault {
  const x = random()
  if (x < 0.28) return 'sigkill'
  if (x < 0.46) return 'sigint'
  if (x < 0.56) return 'export'
  if (x < 0.65) return 'agent'
  if (x < 0.72) return 'store'
  if (x < 0.86 || !disk.fillable) return 'lock'
  return 'disk'
}

async function chaos(
  workers: Worker[],
  dbPath: string,
  disk: Disk,
  random: () => number,
  tally: Record<Fault, number>,
  hostile: {
    tally: HostileTally
    dir: string
    file: string
    silent: SilentServer
    pending: Promise<void>[]
  },
): Promise<void> {
  const end = Date.now() + seconds * 1000
  // Each hostile run once at the start, whatever the draws: a seed without them proves nothing.
  tally.store++
  hostile.pending.push(stalledStoreRun(hostile.file, dbPath, hostile.silent, hostile.tally))
  tally.agent++
  hostile.pending.push(hostileAgentRun(hostile.dir, hostile.file, dbPath, random, hostile.tally))
  while (Date.now() < end) {
    await sleep(1000 + random() * 2500)
    const fault = pickFault(random, disk)
    const worker = workers[Math.floor(random() * workers.length)]!
    tally[fault]++
    if (fault === 'sigkill') worker.kill('SIGKILL', 300 + random() * 1500)
    else if (fault === 'sigint') worker.kill('SIGINT', 300 + random() * 1500)
    else if (fault === 'lock') await holdWriteLock(dbPath, 500 + random() * 2000)
    else if (fault === 'export') await exportAtDatabase(dbPath, random, hostile.tally)
    else if (fault === 'agent') {
      hostile.pending.push(
        hostileAgentRun(hostile.dir, hostile.file, dbPath, random, hostile.tally),
      )
    } else if (fault === 'store') {
      hostile.pending.push(stalledStoreRun(hostile.file, dbPath, hostile.silent, hostile.tally))
    } else await disk.fill(1000 + random() * 2500)
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function main(): Promise<number> {
  const started = Date.now()
  const random = seededRandom(seed)
  const work = tempDir('pacer-chaos-')
  const disk = prepareDisk(join(work, 'disk'))
  const dbPath = join(disk.dir, 'pacer.db')
  let provider: ChaosProvider | undefined
  let silent: SilentServer | undefined
  try {
    silent = await silentServer()
    provider = await startChaosProvider(seed ^ 0x5eed)
    const db = openDatabase(dbPath)
    // Priced, so a call ledgered as free shows (a garbage usage must be estimated, never $0).
    new SettingsStore(db).set({
      baseUrls: { 'openai-compatible': provider.url },
      priceOverrides: { chaos: { input: 3, cachedInput: 3, cacheWrite: 3, output: 15 } },
    })
    db.close()
    const { files, distinct } = writeFiles(work, random)
    console.log(
      `chaos: seed ${seed}, ${processes} processes × ${tasksPerFile} lines (${distinct} distinct` +
        ` tasks), ${seconds} s of faults; disk full: ${disk.why}; db ${dbPath}`,
    )
    const console_ = await startConsole(dbPath)
    const workers = files.map((file, i) => new Worker(`p${i + 1}`, file, dbPath))
    for (const w of workers) w.start()
    const tally: Record<Fault, number> = {
      sigkill: 0,
      sigint: 0,
      lock: 0,
      disk: 0,
      export: 0,
      agent: 0,
      store: 0,
    }
    const hostile = { tally: hostileTally(), dir: work, file: files[0]!, silent, pending: [] }
    await chaos(workers, dbPath, disk, random, tally, hostile)
    await Promise.all(hostile.pending)
    // The faults stop; every file is run until it ends well (or the drain's bound runs out).
    provider.setFaults(null)
    const drained = await Promise.all(workers.map((w) => w.finish(180_000)))
    const polls = await console_.stop()
    const checks = checkDatabase(dbPath, provider.served, distinct)
    checks.push({
      name: 'every file ran to the end',
      measured: drained.filter(Boolean).length,
      expected: workers.length,
      ok: drained.every(Boolean),
    })
    checks.push({
      name: 'console requests answered',
      measured: `${polls.ok}/${polls.sent}`,
      expected: `${polls.sent}/${polls.sent}`,
      ok: polls.ok === polls.sent && polls.sent > 0,
    })
    const h = hostile.tally
    checks.push({
      name: 'exports aimed at the database refused (exit 2)',
      measured: `${h.exportsRefused}/${h.exports}`,
      expected: `${h.exports}/${h.exports}`,
      ok: h.exportsRefused === h.exports,
    })
    checks.push({
      name: 'runs whose agent module exits or hangs at load that exited 0',
      measured: `${h.agentExitCodes.filter((c) => c === 0).length} (codes ${h.agentExitCodes.join(',') || 'none'})`,
      expected: `0 (codes ${h.agentExitCodes.join(',') || 'none'})`,
      ok: h.agentExitCodes.length === h.agents && !h.agentExitCodes.includes(0),
    })
    checks.push({
      name: `runs on a store that never answers: exit 3 said within ${STALL_BOUND_MS / 1000} s of reaching it`,
      measured: `${h.stallsSaid}/${h.stalls} (${h.stallOutcomes.join(', ') || 'none'})`,
      expected: `${h.stalls}/${h.stalls}`,
      ok: h.stallsSaid === h.stalls && h.stalls > 0,
    })
    const starts = workers.reduce((n, w) => n + w.starts, 0)
    const { byKind } = provider.served
    console.log(
      `faults: ${tally.sigkill} SIGKILL, ${tally.sigint} SIGINT, ${tally.lock} write locks held,` +
        ` ${tally.disk} disk full, ${tally.export} exports at the database,` +
        ` ${tally.agent} hostile agent modules, ${tally.store} runs on a stalled store;` +
        ` ${starts} pacer run processes started` +
        `\nprovider: ${JSON.stringify(byKind)}; ${provider.served.calls} answers,` +
        ` ${provider.served.inputTokens}+${provider.served.outputTokens} tokens` +
        `\n${formatChecks(checks)}\nchaos: ${((Date.now() - started) / 1000).toFixed(0)} s`,
    )
    const failed = checks.filter((c) => !c.ok)
    if (failed.length > 0) {
      for (const f of polls.failures) console.log(`console: ${f}`)
      for (const w of workers) console.log(`--- ${w.name} last output:\n${w.lastOutput()}`)
      // The tmpfs goes with the run: keep the database for a look.
      const kept = join(work, 'pacer-failed.db')
      for (const suffix of ['', '-wal']) {
        if (existsSync(dbPath + suffix)) copyFileSync(dbPath + suffix, kept + suffix)
      }
      console.log(`database kept: ${kept}`)
    }
    return failed.length === 0 ? 0 : 1
  } finally {
    await provider?.close()
    await silent?.close()
    disk.release()
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  },
)
