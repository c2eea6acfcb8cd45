// The arithmetic of "which cap would the batch hit, and at which task": running totals in batch
// order per cap, reused tasks counted in the position but not in the money, unpriced ones apart,
// and the minimum weighed against the spend alone (reservations come back).
import { describe, expect, it } from 'vitest'
import { CapForecast, type CapToForecast } from '../../../../src/main/engine/intake/cap-forecast'

const cap = (over: Partial<CapToForecast>): CapToForecast => ({
  capId: 1,
  name: 'the cap on all spend',
  taskType: null,
  provider: null,
  model: null,
  periodKey: '',
  capMicros: 1000,
  spentMicros: 0,
  reservedMicros: 0,
  ...over,
})
const task = (over: Partial<Parameters<CapForecast['add']>[0]> = {}) => ({
  type: 'a',
  provider: 'p',
  model: 'm',
  runs: true,
  costMicros: 100,
  minimumMicros: 10,
  ...over,
})

describe('CapForecast', () => {
  it('names the task whose cost takes the running total past what is left', () => {
    const f = new CapForecast([cap({ spentMicros: 300, reservedMicros: 150 })])
    // 550 left: tasks 1-5 cost 500, the 6th passes it. Task 3 is reused: no money, a position.
    for (let i = 1; i <= 8; i++) f.add(task({ line: i + 1, runs: i !== 3 }))
    const [c] = f.result()
    expect(c).toMatchObject({ leftMicros: 550, tasks: 7, forecastMicros: 700, minimumMicros: 70 })
    expect(c!.hitAt).toEqual({ task: 7, line: 8 })
    expect(c!.minimumPasses).toBe(false)
  })

  it('says a batch fits, leaves out caps that cover none of it, and keeps unpriced tasks apart', () => {
    const f = new CapForecast([
      cap({ capId: 1 }),
      cap({ capId: 2, taskType: 'other' }),
      cap({ capId: 3, model: 'm' }),
    ])
    f.add(task())
    f.add(task({ model: 'x', costMicros: null, minimumMicros: null }))
    const caps = f.result()
    expect(caps.map((c) => c.capId)).toEqual([1, 3])
    expect(caps[0]).toMatchObject({ hitAt: null, forecastMicros: 100, unpricedTasks: 1 })
    expect(caps[0]!.unpricedModels).toEqual(['p/x'])
    expect(caps[1]).toMatchObject({ tasks: 1, unpricedTasks: 0 })
  })

  it('weighs the minimum against the spend alone: what calls in flight hold may come back', () => {
    const held = new CapForecast([cap({ spentMicros: 500, reservedMicros: 400 })])
    for (let i = 0; i < 40; i++) held.add(task({ minimumMicros: 12 }))
    // 480 of input alone: more than the 100 left after reservations, less than 500 unspent.
    expect(held.result()[0]).toMatchObject({ minimumMicros: 480, minimumPasses: false })
    const spent = new CapForecast([cap({ spentMicros: 600 })])
    for (let i = 0; i < 40; i++) spent.add(task({ minimumMicros: 12 }))
    expect(spent.result()[0]).toMatchObject({ minimumMicros: 480, minimumPasses: true })
  })
})
