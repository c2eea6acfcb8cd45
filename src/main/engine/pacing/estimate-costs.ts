// A call's costs from its estimate, asked for several times per admission (each look at the head
// waiter, the handoff's, the take's): made again only when the estimate or what calibrates it
// changed, so that a check allocates nothing. The values are the same as made afresh each time.
import type { BudgetDimension, CallEstimate } from './budget-reading'
import type { CountedOutput } from './counted-output'

type Cost = Record<BudgetDimension, number>

export class EstimateCosts {
  #input = Number.NaN
  #output = Number.NaN
  #ratio = Number.NaN
  #share = Number.NaN
  #charged: Cost | null = null

  /**
   * What the call is charged: the input estimate at `ratio` (learned real / estimated input), the
   * output as estimated, counted as `counted` counts it.
   */
  charged(estimate: CallEstimate, ratio: number, counted: CountedOutput) {
    this.#fresh(estimate, ratio, counted.outputShare)
    return (this.#charged ??= counted.costOf({
      inputTokens: this.#input * ratio,
      outputTokens: this.#output,
    })) as Readonly<Cost>
  }

  #fresh(estimate: CallEstimate, ratio: number, share: number): void {
    const input = estimate.inputTokens ?? 0
    const output = estimate.outputTokens ?? 0
    if (
      input === this.#input &&
      output === this.#output &&
      ratio === this.#ratio &&
      share === this.#share
    ) {
      return
    }
    this.#input = input
    this.#output = output
    this.#ratio = ratio
    this.#share = share
    this.#charged = null
  }
}
