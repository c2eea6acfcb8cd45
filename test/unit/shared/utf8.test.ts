// Strict UTF-8 (issue 11): the check the batch readers, the HTTP body and the console's import use,
// against the decoder of the platform, and across any chunk boundaries.
import { describe, expect, it } from 'vitest'
import { Utf8Scan } from '../../../src/main/engine/core/utf8-scan'
import { decodeUtf8, findInvalidUtf8, invalidUtf8At } from '../../../src/shared/utf8'

const VALID = [
  [0x24],
  [0xc2, 0xa2],
  [0xe2, 0x82, 0xac],
  [0xed, 0x9f, 0xbf], // U+D7FF, the last before the surrogates
  [0xee, 0x80, 0x80], // U+E000, the first after them
  [0xf0, 0x90, 0x8d, 0x88],
  [0xf4, 0x8f, 0xbf, 0xbf], // U+10FFFF
]
const INVALID = [
  [0x80], // a continuation alone
  [0xc0, 0xaf], // overlong "/"
  [0xc1, 0xbf],
  [0xe0, 0x80, 0xaf], // overlong, 3 bytes
  [0xed, 0xa0, 0x80], // U+D800
  [0xed, 0xbf, 0xbf], // U+DFFF
  [0xf0, 0x80, 0x80, 0xaf], // overlong, 4 bytes
  [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
  [0xf5, 0x80, 0x80, 0x80],
  [0xff],
  [0xe2, 0x82], // cut off
  [0xe9, 0x22], // latin-1 é before a quote
]

describe('strict UTF-8', () => {
  it('agrees with the platform decoder on every sequence', () => {
    for (const seq of VALID) {
      const bytes = Uint8Array.from([0x61, ...seq, 0x62])
      expect(invalidUtf8At(bytes), seq.join(' ')).toBe(-1)
      expect(decodeUtf8(bytes).ok).toBe(true)
    }
    for (const seq of INVALID) {
      const bytes = Uint8Array.from([0x61, ...seq, 0x62])
      expect(invalidUtf8At(bytes), seq.join(' ')).toBe(1)
      expect(decodeUtf8(bytes)).toEqual({
        ok: false,
        invalid: { line: 1, byte: 2, value: seq[0] },
      })
    }
  })

  it('names the line and the byte within it', () => {
    const bytes = Buffer.from('ab\ncd\nxy\xe9z\n', 'latin1')
    expect(findInvalidUtf8(bytes)).toEqual({ line: 3, byte: 3, value: 0xe9 })
  })

  it('finds the same bad bytes whatever the chunks, once a line', () => {
    const bytes = Buffer.concat([
      Buffer.from('é€😀\n'),
      Buffer.from('ok \xe9 and \xe8\n', 'latin1'),
      Buffer.from('😀'),
      Buffer.from([0xf0, 0x9f]), // cut off by the end
    ])
    for (let size = 1; size <= 8; size++) {
      const scan = new Utf8Scan()
      const bad = []
      for (let i = 0; i < bytes.length; i += size)
        bad.push(...scan.push(bytes.subarray(i, i + size)))
      bad.push(...scan.end())
      expect(bad, `chunks of ${size}`).toEqual([
        { line: 2, byte: 4, value: 0xe9 },
        { line: 3, byte: 5, value: 0xf0 },
      ])
    }
  })
})
