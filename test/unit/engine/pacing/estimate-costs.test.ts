// The costs of an estimate, kept between the checks of one admission: the same values as made
// afresh, made again whenever the estimate, its calibration or the counting changed.
import { describe, expect, it } from 'vitest'
import { costOf, type CallEstimate } from '../../../../src/main/engine/pacing/budget-reading'
import type { CountedOutput } from '../../../../src/main/engine/pacing/counted-output'
import { EstimateCosts } from '../../../../src/main/engine/pacing/estimate-costs'

/** A CountedOutput whose counting is set by the test, and which counts the costs it makes. */
function counting(): { counted: CountedOutput; made: () => number; share: (s: number) => void } {
  let made = 0
  let share = 0
  const counted = {
    get outputShare() {
      return share
    },
    costOf(call: CallEstimate) {
      made++
      const cost = costOf(call)
      return { ...cost, 'input-tokens': cost['input-tokens'] + share * cost['output-tokens'] }
    },
  } as unknown as CountedOutput
  return { counted, made: () => made, share: (s) => (share = s) }
}

describe('EstimateCosts', () => {
  it('makes the costs once while nothing they come from changes', () => {
    const { counted, made } = counting()
    const costs = new EstimateCosts()
    const estimate = { inputTokens: 100, outputTokens: 20 }
    const first = costs.charged(estimate, 1.5, counted)
    for (let i = 0; i < 5; i++) expect(costs.charged({ ...estimate }, 1.5, counted)).toBe(first)
    expect(made()).toBe(1)
    // The output at its estimate (max_tokens), as a provider reserves it.
    expect(first).toEqual(costOf({ inputTokens: 150, outputTokens: 20 }))
  })

  it('makes them again when the estimate, the ratio or the counting changed', () => {
    const { counted, share } = counting()
    const costs = new EstimateCosts()
    const estimate: CallEstimate = { inputTokens: 100, outputTokens: 20 }
    costs.charged(estimate, 1, counted)
    // The same object changed in place: its values are the key, not its identity.
    estimate.inputTokens = 200
    expect(costs.charged(estimate, 1, counted).tokens).toBe(220)
    expect(costs.charged(estimate, 2, counted).tokens).toBe(420)
    estimate.outputTokens = 40
    expect(costs.charged(estimate, 2, counted).tokens).toBe(440)
    estimate.outputTokens = 20
    share(1)
    expect(costs.charged(estimate, 2, counted)['input-tokens']).toBe(420)
    expect(costs.charged({}, 2, counted)).toEqual(costOf({}))
  })
})
