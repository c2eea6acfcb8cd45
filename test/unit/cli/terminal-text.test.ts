import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { terminalSafe } from '../../../src/main/cli/terminal-text'

// What a terminal acts on: C0 controls, DEL, C1 (0x9b is an 8-bit CSI), and the Unicode format
// characters that reorder (bidi overrides, isolates, marks) or break lines (LS, PS).
// eslint-disable-next-line no-control-regex -- what a terminal acts on is the point
const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u

describe('terminalSafe', () => {
  it('escapes an ESC sequence that would clear the screen and set the title', () => {
    const hostile = 'classify\u001b[2J\u001b]0;pwned\u0007'
    expect(terminalSafe(hostile)).toBe('classify\\u001b[2J\\u001b]0;pwned\\u0007')
  })

  it('escapes C1 controls, bidi overrides and line separators; keeps other text as it is', () => {
    expect(terminalSafe('a\u009b31mb')).toBe('a\\u009b31mb')
    expect(terminalSafe('\u202eevil\u2066x\u2069')).toBe('\\u202eevil\\u2066x\\u2069')
    expect(terminalSafe('a\u2028b')).toBe('a\\u2028b')
    expect(terminalSafe('café ☕ 日本語 ok')).toBe('café ☕ 日本語 ok')
  })

  it('escapes line breaks in one-line text, keeps them in text of several lines', () => {
    expect(terminalSafe('a\nb\r\tc')).toBe('a\\nb\\r\\tc')
    expect(terminalSafe('a\nb\r\tc', { lines: true })).toBe('a\nb\\r\\tc')
  })

  it('leaves nothing a terminal acts on, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(terminalSafe(s)).not.toMatch(ACTIVE)
        expect(terminalSafe(s, { lines: true }).replace(/\n/g, '')).not.toMatch(ACTIVE)
      }),
    )
  })

  it('keeps JSON valid and equal once parsed, C1 and bidi characters included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const line = terminalSafe(JSON.stringify({ s }), { lines: true })
        expect(JSON.parse(line)).toEqual({ s })
      }),
    )
  })
})
