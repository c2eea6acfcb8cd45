// Pacer as several `pacer run` processes on one database, in virtual time: one Scheduler per
// process, each on its own connection to one SQLite file (the pacing store every process shares,
// leased in blocks while a worker is alone, as `pacer run` opens it), each driving its share of the
// tasks (split round-robin, as the live bench splits its batch files). What the live leg's three
// processes do, without the real processes' timing: the two agree, or the simulation is wrong.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openDatabase } from '../../src/main/engine/db'
import { controllerFactory } from '../../src/main/engine/pacing/controllers'
import { Scheduler } from '../../src/main/engine/pacing/scheduler'
import { SqlitePacingStore } from '../../src/main/engine/pacing/store-sqlite'
import type { Contender } from './contenders'
import { viaScheduler } from './contenders'

/** Pacer as `processes` processes on one database file. */
export function pacerProcesses(processes: number): Contender {
  return {
    name: `Pacer, ${processes} processes on one database`,
    async drive(run) {
      const dir = mkdtempSync(path.join(tmpdir(), 'pacer-procs-'))
      const dbs = Array.from({ length: processes }, () => openDatabase(path.join(dir, 'pacer.db')))
      try {
        const changes = await Promise.all(
          dbs.map((db, p) =>
            viaScheduler(
              { ...run, tasks: run.tasks.filter((_, i) => i % processes === p) },
              new Scheduler({
                createController: controllerFactory('adaptive'),
                pacing: { random: run.random },
                store: new SqlitePacingStore({ db, lean: true }),
                worker: `w${p + 1}`,
              }),
              true,
            ),
          ),
        )
        return changes.reduce((a, b) => a + b, 0)
      } finally {
        for (const db of dbs) db.close()
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}
