// The one engine the transports hold while the engine behind it is reopened (a console process
// joining its team): real engines on one temp database. It is not replaced under an export (or a
// command) under way, and what the transports attached at start follows it to the new engine.
import { Writable } from 'node:stream'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { switchingEngine } from '../../../../src/main/engine/app/switching-engine'
import { tempDir, until } from '../../../helpers/cli'

let engine: Engine | undefined
afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  engine = undefined
})

describe('switchingEngine', () => {
  it('waits for an export under way, then reopens; listeners and the started runner follow', async () => {
    const dbPath = join(tempDir('pacer-switch-'), 'p.db')
    const first = createEngine({ dbPath })
    const sw = switchingEngine(first)
    engine = sw.engine
    const warnings: string[] = []
    const states: string[] = []
    engine.onWarning((w) => warnings.push(w))
    engine.subscribe('tasks:changed', (e) => states.push(...e.batches.map((b) => b.state)))
    engine.start()
    // An export whose reader does not read yet: the database stays open under it.
    let release: (() => void) | null = null
    const out = new Writable({
      write(_chunk, _enc, done) {
        release = done
      },
    })
    const exported = engine.exportCsv('events', out)
    await until(() => release !== null || undefined)
    let opened = 0
    const next = () => {
      opened++
      return createEngine({ dbPath })
    }
    expect(await sw.swap(() => true, next)).toBe(false)
    expect(sw.current()).toBe(first)
    release!()
    await exported
    // A batch running in the old one is the caller's reason to wait: `ready` says no.
    expect(await sw.swap(() => false, next)).toBe(false)
    expect(await sw.swap(() => true, next)).toBe(true)
    expect(opened).toBe(1)
    expect(sw.current()).not.toBe(first)
    expect(engine.runner).toBe(sw.current().runner)
    await engine.handlers['tasks:enqueue']({ tasks: [{ type: 't', payload: { n: 1 } }] })
    await until(() => states.includes('done') || undefined)
    sw.current().runner.emit('warning', 'from the new engine')
    expect(warnings).toEqual(['from the new engine'])
  })
})
