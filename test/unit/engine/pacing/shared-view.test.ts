// The console's view of the partitions (Scheduler.view(), rebuilt from the store's shared records)
// carries this process's pace and last pause reason, which only the scheduler that read the
// headers and the refusals knows.
import { describe, expect, it } from 'vitest'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { fakeClock } from './scheduler-helpers'

describe('Scheduler.view(): what only this process knows', () => {
  it('adds the pace and the pause reason of a partition this process paces', async () => {
    const s = new Scheduler({ clock: fakeClock(), pacing: { random: () => 0.5 } })
    const permit = await s.acquire('sim:a')
    permit.release('throttled', {
      headers: {
        'x-ratelimit-limit-requests': '600',
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '1s',
        'retry-after-ms': '1000',
      },
    })
    const [view] = s.view()
    expect(view).toMatchObject({
      partition: 'sim:a',
      pace: { burstMs: 60_000, perMinute: { requests: 600 } },
      pauseReason: expect.stringMatching(
        /^paused until \S+Z \(429 said wait 1000 ms: the announced budget is empty\)$/,
      ),
    })
    s.close()
  })

  it('leaves a partition without a budget or a pause as the shared view has it', async () => {
    const s = new Scheduler({ clock: fakeClock(), pacing: {} })
    const permit = await s.acquire('sim:b')
    permit.release('ok', {})
    expect(s.view()).toEqual(s.view())
    expect(s.view()[0]).not.toHaveProperty('pace')
    expect(s.view()[0]).not.toHaveProperty('pauseReason')
    s.close()
  })
})
