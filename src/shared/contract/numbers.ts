import { z } from 'zod'

/** Building blocks of the contract's schemas (not re-exported: each module names its own fields). */
export const finiteNumber = z.number().refine(Number.isFinite, 'must be a finite number')
export const epochMs = z.number().int().nonnegative()
