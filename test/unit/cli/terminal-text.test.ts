import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { terminalSafe, terminalSafeStream } from '../../../src/main/cli/terminal-text'

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

/** What the stream makes of `input` fed as the byte chunks `cuts` split it into. */
async function throughStream(input: string, cuts: number[]): Promise<string> {
  const bytes = Buffer.from(input, 'utf8')
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const chunks = [0, ...at].map((from, i) => bytes.subarray(from, at[i] ?? bytes.length))
  return text(Readable.from(chunks).pipe(terminalSafeStream()))
}

describe('terminalSafeStream', () => {
  it("escapes a CSV's hostile cells, keeps its CRLF record ends, escapes a lone CR", async () => {
    const csv = 'type,answer\r\nx,"ok\u001b[2J\u001b]52;c;cHduZWQ=\u0007\u009b31m\u202e\rover"\r\n'
    expect(await throughStream(csv, [])).toBe(
      'type,answer\r\nx,"ok\\u001b[2J\\u001b]52;c;cHduZWQ=\\u0007\\u009b31m\\u202e\\rover"\r\n',
    )
  })

  it('is terminalSafe (CRLF aside) wherever the chunks are cut, within characters too', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary' }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (s, cuts) => {
          const expected = s
            .split('\r\n')
            .map((part) => terminalSafe(part, { lines: true }))
            .join('\r\n')
          expect(await throughStream(s, cuts)).toBe(expected)
        },
      ),
    )
  })
})
