// Invalid UTF-8 found in a stream of chunks (a CSV batch file, read a chunk at a time).
import { isUtf8 } from 'node:buffer'
import { invalidUtf8At } from '../../../shared/utf8'

/** A bad byte: its line, its byte within the line (both 1-based) and its value. */
export interface BadByte {
  line: number
  byte: number
  value: number
}

/**
 * Finds the invalid UTF-8 of a stream whatever its chunk boundaries: a character cut by one is
 * checked whole with the next chunk, and lines and their bytes are counted across chunks. Only the
 * first bad byte of a line is reported. A chunk of valid UTF-8 (nearly all) costs one native check.
 */
export class Utf8Scan {
  #line = 1
  /** Bytes of the current line before the part being scanned. */
  #lineBytes = 0
  /** The start of a character the last chunk cut (1 to 3 bytes), checked with the next one. */
  #carry: Buffer | null = null
  #lastBadLine = 0

  /** The bad bytes of `chunk` (and of the character the previous one cut). */
  push(chunk: Buffer): BadByte[] {
    const data = this.#carry ? Buffer.concat([this.#carry, chunk]) : chunk
    const cut = completeLength(data)
    this.#carry = cut < data.length ? Buffer.from(data.subarray(cut)) : null
    return this.#scan(data, cut)
  }

  /** The bad bytes left at the end: a character cut off by the end of the stream. */
  end(): BadByte[] {
    const carry = this.#carry
    this.#carry = null
    return carry ? this.#scan(carry, carry.length) : []
  }

  #scan(data: Buffer, end: number): BadByte[] {
    if (isUtf8(data.subarray(0, end))) {
      this.#count(data, 0, end)
      return []
    }
    const bad: BadByte[] = []
    let from = 0
    for (let at = invalidUtf8At(data, 0, end); at !== -1; at = invalidUtf8At(data, from, end)) {
      this.#count(data, from, at)
      if (this.#line !== this.#lastBadLine) {
        bad.push({ line: this.#line, byte: this.#lineBytes + 1, value: data[at]! })
        this.#lastBadLine = this.#line
      }
      this.#count(data, at, at + 1)
      from = at + 1
    }
    this.#count(data, from, end)
    return bad
  }

  /** Moves the line and byte counters over data[from, to). */
  #count(data: Buffer, from: number, to: number): void {
    let lineStart = -1
    for (let nl = data.indexOf(0x0a, from); nl !== -1 && nl < to; nl = data.indexOf(0x0a, nl + 1)) {
      this.#line++
      lineStart = nl + 1
    }
    this.#lineBytes = lineStart === -1 ? this.#lineBytes + (to - from) : to - lineStart
  }
}

/** The length of `data` without a character cut off at its end (its first 1 to 3 bytes). */
function completeLength(data: Uint8Array): number {
  const n = data.length
  for (let k = 1; k <= 3 && k <= n; k++) {
    const b = data[n - k]!
    if (b < 0x80) return n
    if (b >= 0xc0) {
      const needed = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2
      return needed > k ? n - k : n
    }
  }
  return n
}
