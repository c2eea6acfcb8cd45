import { describe, expect, it } from 'vitest'
import { exportFileName } from '../../../src/main/transport/ledger-export'

describe('exportFileName', () => {
  it('uses the local date, zero-padded', () => {
    expect(exportFileName('events', new Date(2025, 2, 4, 23, 59))).toBe('pacer-events-20250304.csv')
    expect(exportFileName('summary', new Date(2024, 11, 31))).toBe('pacer-summary-20241231.csv')
  })
})
