import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { safeJson } from '../../../../src/main/engine/core/json-text'

// What a terminal acts on, C0 included: JSON.stringify escapes C0, safeJson the rest.
// eslint-disable-next-line no-control-regex -- what a terminal acts on is the point
const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u

describe('safeJson', () => {
  it('writes DEL, C1, bidi and line-separator characters as \\u escapes', () => {
    expect(safeJson({ t: 'a\u009b31m\u202eb\u2066\u007f\u2028\u001b' })).toBe(
      '{"t":"a\\u009b31m\\u202eb\\u2066\\u007f\\u2028\\u001b"}',
    )
    expect(safeJson('café ☕ 日本語')).toBe('"café ☕ 日本語"')
  })

  it('is JSON.stringify once parsed, and leaves nothing a terminal acts on, whatever the value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, s) => {
        for (const v of [value, { s }]) {
          const text = safeJson(v)
          expect(text).not.toMatch(ACTIVE)
          expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)))
        }
      }),
    )
  })

  it('refuses a value JSON cannot hold, naming its type', () => {
    expect(() => safeJson(undefined)).toThrow(/not JSON-serializable: undefined/)
  })
})
