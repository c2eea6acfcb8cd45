// JSON read with every number exactly as written: by the engine and the server, and by the console
// to refuse what it could not send. JSON.parse makes each number a double: 9007199254740993 becomes
// ...992 and 1e-400 becomes 0, so two different tasks would hash alike and the provider would be
// sent a value that was never in the file.
//
// The rule: a number a double holds exactly (the decimal written and the double's shortest form are
// the same value: 1, 1.0, 1e3, 0.1, -0) is read as that double, so canonical JSON writes it as
// JSON.stringify does and stored fingerprints stay what they were (`1.0` is `1`, as before). Any
// other number (more digits than a double keeps, an exponent past its range) is a LosslessNumber
// whose digits are written as they came. No two different values can then share a canonical form.
import {
  isLosslessNumber,
  LosslessNumber,
  parse as parseLossless,
  splitNumber,
  stringify as stringifyLossless,
} from 'lossless-json'

export { isLosslessNumber }

/**
 * A number token JSON.parse might not read exactly: 16 or more digits (and dots), or an exponent.
 * Anchored at what may precede a JSON value, so most digits inside strings do not match; one that
 * does only costs the slower parse. A number without an exponent and at most 15 digits is one a
 * double holds (DBL_DIG): nothing JSON.parse loses can get past this test.
 */
const INEXACT_NUMBER = /(?:^|[\s:,[])-?\d(?:[\d.]{15}|[\d.]*[eE])/

const OPTIONS = {
  parseNumber: exactNumber,
  // JSON.parse keeps the last of a repeated key: a line reads the same on either path.
  onDuplicateKey: ({ newValue }: { newValue: unknown }) => newValue,
}

/**
 * Parses JSON text with its numbers as written: every way a task enters (batch lines, CSV cells,
 * params, the HTTP API) and every stored payload or params read back for a request. Throws a
 * SyntaxError worded as JSON.parse words it.
 */
export function parseExactJson(text: string): unknown {
  if (!INEXACT_NUMBER.test(text)) return JSON.parse(text)
  try {
    return parseLossless(text, null, OPTIONS)
  } catch (err) {
    JSON.parse(text) // text that is not JSON: JSON.parse's message, as on the fast path
    // JSON that the recursive parser cannot take (nested tens of thousands deep).
    const message = err instanceof RangeError ? 'nested too deeply' : (err as Error).message
    throw new SyntaxError(message, { cause: err })
  }
}

/** A number token as a double when the double is the same value, else as its digits. */
function exactNumber(text: string): number | LosslessNumber {
  const double = Number(text)
  if (text.length <= 15 && !text.includes('e') && !text.includes('E')) return double
  return sameValue(text, double) ? double : new LosslessNumber(text)
}

function sameValue(text: string, double: number): boolean {
  if (!Number.isFinite(double)) return false
  const written = splitNumber(text)
  const shortest = splitNumber(String(double))
  return (
    written.digits === shortest.digits &&
    written.exponent === shortest.exponent &&
    written.sign === shortest.sign
  )
}

/** JSON.stringify, writing a LosslessNumber as its digits (what a request body is written with). */
export function stringifyExact(value: unknown): string {
  if (!hasExactNumber(value, 0)) return JSON.stringify(value)
  return stringifyLossless(value) as string
}

function hasExactNumber(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false
  if (isLosslessNumber(value)) return true
  // Deeper than any payload the engine accepts (256): let the slow writer look.
  if (depth > 300) return true
  // Plain loops: this walks every request the engine hashes and sends, and a closure per array
  // (`some`) was most of what it allocated.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasExactNumber(value[i], depth + 1)) return true
    return false
  }
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key]
    if (v !== null && typeof v === 'object' && hasExactNumber(v, depth + 1)) return true
  }
  return false
}

/**
 * The first number under `value` that a double cannot hold (a LosslessNumber), with its path: what
 * the console refuses to send, since neither its IPC nor its JSON would carry the digits.
 */
export function findInexactNumber(
  value: unknown,
  path: string,
): { path: string; digits: string } | null {
  if (value === null || typeof value !== 'object') return null
  if (isLosslessNumber(value)) return { path, digits: value.value }
  const entries = Array.isArray(value)
    ? value.map((v, i) => [`${path}[${i}]`, v] as const)
    : Object.entries(value).map(([k, v]) => [`${path}.${k}`, v] as const)
  for (const [p, v] of entries) {
    const found = findInexactNumber(v, p)
    if (found) return found
  }
  return null
}
