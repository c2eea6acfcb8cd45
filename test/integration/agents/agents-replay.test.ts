// An agent killed between its calls and run again: what the call journal promises (issue 10): the
// tool step and the first call are replayed, not repeated.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { query, runPacer } from '../../helpers/cli'
import { killedAfterToolStep } from '../../helpers/agent-module'
import { eitherDialect, vendor, type FakeVendor } from '../../helpers/fake-vendor'

let server: FakeVendor
beforeEach(async () => {
  server = await vendor(eitherDialect)
})
afterEach(async () => {
  await server.close()
})

// enabled when the journal lands
describe('pacer run --agents, killed between the calls and run again', () => {
  it('replays the first call and the tool step instead of repeating them', async () => {
    const chats = () => server.requests.filter((r) => r.url.endsWith('/chat/completions')).length
    const { db, args, env, toolRuns } = await killedAfterToolStep(`${server.url}/v1`, () =>
      expect(chats()).toBe(1),
    )
    const again = await runPacer(args, env)
    expect(again.code).toBe(0)
    // The provider saw the first call once and the second once; the tool ran once.
    expect(chats()).toBe(2)
    expect(toolRuns()).toBe(1)
    const ledger = query<{ step: number; outcome: string }>(
      db,
      'SELECT step, outcome FROM ledger WHERE step > 0 ORDER BY id',
    )
    expect(ledger).toEqual([
      { step: 1, outcome: 'executed' },
      { step: 1, outcome: 'replayed' },
      { step: 3, outcome: 'executed' },
    ])
  })
})
