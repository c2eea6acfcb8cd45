/**
 * The AIMD sliders: their ranges, and how a slider value maps to the engine's parameter (the
 * cooldown is shown in seconds, stored in milliseconds). Ranges cover the seed defaults with
 * headroom; a value set elsewhere beyond a range widens that slider rather than being clipped.
 */
import type { AimdParamsPatch, AimdParamsView } from '../../../../shared/contract'

export interface ParamSpec {
  name: 'min' | 'max' | 'initial' | 'increase' | 'decrease' | 'cooldown'
  label: string
  help: string
  min: number
  max: number
  step: number
  /** The slider's value from the engine's parameters. */
  read(params: AimdParamsView): number
  /** The patch that sets it. */
  patch(value: number): AimdParamsPatch
  format(value: number): string
}

const plain = (v: number): string => String(Math.round(v * 100) / 100)

export const PARAM_SPECS: readonly ParamSpec[] = [
  {
    name: 'min',
    label: 'Min',
    help: 'The limit never goes below this, however hard the provider pushes back.',
    min: 1,
    max: 32,
    step: 1,
    read: (p) => p.min,
    patch: (v) => ({ min: v }),
    format: plain,
  },
  {
    name: 'max',
    label: 'Max',
    help: 'The limit never grows past this, however well calls go.',
    min: 1,
    max: 64,
    step: 1,
    read: (p) => p.max,
    patch: (v) => ({ max: v }),
    format: plain,
  },
  {
    name: 'initial',
    label: 'Initial',
    help: 'Where a partition starts before it has seen any answer.',
    min: 1,
    max: 32,
    step: 0.5,
    read: (p) => p.initial,
    patch: (v) => ({ initial: v }),
    format: plain,
  },
  {
    name: 'increase',
    label: 'Increase',
    help: 'Added to the limit per successful call while the limit is in use.',
    min: 0.1,
    max: 4,
    step: 0.1,
    read: (p) => p.increase,
    patch: (v) => ({ increase: v }),
    format: (v) => `+${plain(v)}`,
  },
  {
    name: 'decrease',
    label: 'Decrease',
    help: 'The limit is multiplied by this on a throttle (once per congestion episode).',
    min: 0.05,
    max: 0.95,
    step: 0.05,
    read: (p) => p.decrease,
    patch: (v) => ({ decrease: v }),
    format: (v) => `×${plain(v)}`,
  },
  {
    name: 'cooldown',
    label: 'Cooldown',
    help: 'After a cut, successes do not grow the limit for this long.',
    min: 0,
    max: 60,
    step: 1,
    read: (p) => p.cooldownMs / 1000,
    patch: (v) => ({ cooldownMs: Math.round(v * 1000) }),
    format: (v) => `${plain(v)} s`,
  },
]
