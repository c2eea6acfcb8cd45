/**
 * Strict UTF-8, checked byte by byte where the bytes are (a batch file, an HTTP body, a file the
 * console imports): decoding would turn every bad byte into U+FFFD, and `caf\xe9` and `caf\xe8`
 * would then be one task. Overlong forms (C0 80), UTF-16 surrogates (ED A0 80), code points past
 * U+10FFFF and cut-off sequences are all invalid, as the Unicode standard (table 3-7) has it.
 */

/**
 * The index of the first byte of the first invalid sequence in `bytes[start, end)`, or -1. A
 * sequence cut off by `end` counts as invalid: callers pass whole lines.
 */
export function invalidUtf8At(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let i = start
  while (i < end) {
    const b = bytes[i]!
    if (b < 0x80) {
      i++
      continue
    }
    const length = sequenceLength(bytes, i, end)
    if (length === 0) return i
    i += length
  }
  return -1
}

/** The length of the well-formed sequence at `i` (2 to 4), or 0. */
function sequenceLength(bytes: Uint8Array, i: number, end: number): number {
  const b = bytes[i]!
  let length: number
  // The second byte's range depends on the first (table 3-7); later ones are 80..BF.
  let low = 0x80
  let high = 0xbf
  if (b >= 0xc2 && b <= 0xdf) length = 2
  else if (b >= 0xe0 && b <= 0xef) {
    length = 3
    if (b === 0xe0) low = 0xa0 // below: overlong
    if (b === 0xed) high = 0x9f // above: a surrogate (D800..DFFF)
  } else if (b >= 0xf0 && b <= 0xf4) {
    length = 4
    if (b === 0xf0) low = 0x90 // below: overlong
    if (b === 0xf4) high = 0x8f // above: past U+10FFFF
  } else return 0 // 80..C1 (a continuation, or an overlong lead), F5..FF
  if (i + length > end) return 0
  const second = bytes[i + 1]!
  if (second < low || second > high) return 0
  for (let k = 2; k < length; k++) {
    const next = bytes[i + k]!
    if (next < 0x80 || next > 0xbf) return 0
  }
  return length
}

/** Where an invalid byte is: its line and its byte within the line (both 1-based), its value. */
export interface InvalidUtf8 {
  line: number
  byte: number
  value: number
}

/** The first invalid UTF-8 byte of a whole text's bytes, by line (LF-separated), or null. */
export function findInvalidUtf8(bytes: Uint8Array): InvalidUtf8 | null {
  const at = invalidUtf8At(bytes)
  if (at === -1) return null
  let line = 1
  let lineStart = 0
  for (let i = 0; i < at; i++) {
    if (bytes[i] === 0x0a) {
      line++
      lineStart = i + 1
    }
  }
  return { line, byte: at - lineStart + 1, value: bytes[at]! }
}

/** The words for a bad byte within its line: `byte 7: invalid UTF-8 (0xE9)`. */
export function invalidUtf8Message(byte: number, value: number): string {
  const hex = value.toString(16).toUpperCase().padStart(2, '0')
  return `byte ${byte}: invalid UTF-8 (0x${hex})`
}

const STRICT = new TextDecoder('utf-8', { fatal: true })

/**
 * The text of UTF-8 bytes, or where the first invalid byte is. A BOM at the start is dropped, as
 * every reader of a batch file drops it. The native decoder checks; only a failure is scanned.
 */
export function decodeUtf8(
  bytes: Uint8Array,
): { ok: true; text: string } | { ok: false; invalid: InvalidUtf8 } {
  try {
    return { ok: true, text: STRICT.decode(bytes) }
  } catch {
    const invalid = findInvalidUtf8(bytes)
    // The decoder and the scan follow the same table: a disagreement would be a bug in one.
    if (invalid === null) throw new Error('UTF-8 decoder and check disagree')
    return { ok: false, invalid }
  }
}
