/**
 * What JSON cannot carry, found before it is sent or hashed. JSON.parse('1e400') gives Infinity,
 * and JSON.stringify then sends null in its place (NaN too), drops functions and symbol keys, turns
 * a Date into a string and a Map into {}: two different inputs would reach the engine as one and
 * deduplicate. The engine refuses such values where they enter (its fingerprints are hashes of
 * canonicalJsonOf), the console answers the same before anything leaves the page, and both word
 * and path it the same way: `payload.items[3].price is Infinity, which is not JSON`.
 */

import { isLosslessNumber } from 'lossless-json'

export interface NonJsonValue {
  /** Where the value is, e.g. `payload.items[3].price` or `tasks[0].payload.x`. */
  path: string
  message: string
}

/** How strict a walk is where the console and the engine's canonical form differ. */
export interface JsonRules {
  /**
   * Visit object keys sorted by UTF-16 code units (canonical order) rather than insertion order;
   * the first bad value reported is then the first one in the canonical text. @default false
   */
  sortKeys?: boolean
  /**
   * An object property whose value is `undefined`: 'absent' reads it as JSON.stringify and zod's
   * optional fields do (`{ since: undefined }` is fine); 'refuse' reports it, because a canonical
   * form must not hash `{ a: undefined }` like `{}`. An undefined array item is always refused (it
   * would become null). @default 'absent'
   */
  undefinedProperties?: 'absent' | 'refuse'
  /** Containers nested deeper than this are refused. @default Infinity */
  maxDepth?: number
}

/** The engine's rules for payloads it fingerprints. */
export const CANONICAL_JSON_RULES: Readonly<Required<JsonRules>> = Object.freeze({
  sortKeys: true,
  undefinedProperties: 'refuse',
  // A payload nested this deep is a mistake or an attack: its error names it and says what to do.
  maxDepth: 256,
})

/**
 * The first value under `value` that JSON cannot carry faithfully, or null. Walks iteratively, so
 * a deeply nested value cannot overflow the stack.
 */
export function findNonJson(
  value: unknown,
  rootPath = '',
  rules: JsonRules = {},
): NonJsonValue | null {
  return walk(value, rootPath, rules, null)
}

/**
 * Canonical JSON (keys sorted by UTF-16 code units, no whitespace, -0 as 0) under
 * CANONICAL_JSON_RULES, or the first value that JSON cannot carry. One walk does both.
 */
export function canonicalJsonOf(
  value: unknown,
  rootPath = 'payload',
): { ok: true; json: string } | { ok: false; nonJson: NonJsonValue } {
  const out: string[] = []
  const nonJson = walk(value, rootPath, CANONICAL_JSON_RULES, out)
  return nonJson ? { ok: false, nonJson } : { ok: true, json: out.join('') }
}

/** The report for a value found where JSON was expected (the engine's check of a task's type). */
export function nonJsonAt(path: string, value: unknown): NonJsonValue {
  return notJson(path, describeValue(value))
}

/** How a value reads in a message: 'NaN', 'a function', 'a BigInt (10n)', 'an Invoice'. */
function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return 'undefined'
    case 'number':
      return String(value) // NaN, Infinity, -Infinity
    case 'bigint':
      return `a BigInt (${value}n)`
    case 'symbol':
      return 'a symbol'
    case 'function':
      return 'a function'
    case 'string':
    case 'boolean':
      return `a ${typeof value}`
    default: {
      if (value === null) return 'null'
      const ctor: unknown = (value as { constructor?: unknown }).constructor
      const name =
        typeof ctor === 'function' && ctor.name !== ''
          ? ctor.name
          : 'object with a custom prototype'
      // "an Invoice", "a Map", "a Uint8Array" (a leading U is usually said "you").
      return /^[aeio]/i.test(name) ? `an ${name}` : `a ${name}`
    }
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

type Frame =
  /** `prefix` is what the canonical text has before the value: ',' or '"key":'. */
  | { kind: 'value'; value: unknown; path: string; depth: number; prefix: string }
  | { kind: 'hole'; path: string }
  | { kind: 'leave'; container: object; close: string }

// `out`, when given, receives the canonical text. Children are pushed in reverse so that they are
// visited (and a bad one reported) in reading order.
function walk(
  value: unknown,
  rootPath: string,
  rules: JsonRules,
  out: string[] | null,
): NonJsonValue | null {
  const maxDepth = rules.maxDepth ?? Infinity
  const stack: Frame[] = [{ kind: 'value', value, path: rootPath, depth: 0, prefix: '' }]
  // Only the objects on the current path: a value reached twice through siblings is fine in JSON.
  const onPath = new Set<object>()
  while (stack.length > 0) {
    const frame = stack.pop()!
    if (frame.kind === 'hole') return notJson(frame.path, 'a hole in a sparse array')
    if (frame.kind === 'leave') {
      onPath.delete(frame.container)
      out?.push(frame.close)
      continue
    }
    const { value: v, path, depth } = frame
    out?.push(frame.prefix)
    switch (typeof v) {
      case 'string':
        if (!v.isWellFormed()) return loneSurrogate(path)
        out?.push(JSON.stringify(v))
        continue
      case 'boolean':
        out?.push(v ? 'true' : 'false')
        continue
      case 'number':
        if (!Number.isFinite(v)) return notJson(path, describeValue(v))
        out?.push(JSON.stringify(v)) // -0 already prints as 0
        continue
      case 'object':
        if (v === null) {
          out?.push('null')
          continue
        }
        // A number as written that a double cannot hold (shared/exact-json.ts): its digits.
        if (isLosslessNumber(v)) {
          if (!JSON_NUMBER.test(v.value)) return notJson(path, `"${v.value}" as a number`)
          out?.push(v.value)
          continue
        }
        break
      default:
        return notJson(path, describeValue(v))
    }
    if (onPath.has(v)) return notJson(path, 'a circular reference')
    if (depth >= maxDepth) {
      const where = path || 'input'
      return {
        path: where,
        message: `${where} is nested deeper than ${maxDepth} levels: flatten the payload`,
      }
    }
    const children: Frame[] = []
    let open: string
    let close: string
    if (Array.isArray(v)) {
      if (Object.getPrototypeOf(v) !== Array.prototype) return notJson(path, describeValue(v))
      ;[open, close] = ['[', ']']
      for (let i = 0; i < v.length; i++) {
        const itemPath = `${path}[${i}]`
        const prefix = i === 0 ? '' : ','
        children.push(
          i in v
            ? { kind: 'value', value: v[i], path: itemPath, depth: depth + 1, prefix }
            : { kind: 'hole', path: itemPath },
        )
      }
    } else {
      const proto: unknown = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) return notJson(path, describeValue(v))
      // JSON.stringify silently skips symbol keys: two different objects would hash alike.
      const symbol = Object.getOwnPropertySymbols(v).find((s) =>
        Object.prototype.propertyIsEnumerable.call(v, s),
      )
      if (symbol !== undefined) {
        return notJson(`${path}[${String(symbol)}]`, 'a symbol-keyed property')
      }
      ;[open, close] = ['{', '}']
      const record = v as Record<string, unknown>
      const keys = Object.keys(record)
      // Default sort compares UTF-16 code units: the order is the same in every JS engine.
      if (rules.sortKeys) keys.sort()
      for (const key of keys) {
        if (!key.isWellFormed()) return loneSurrogate(keyPath(path, key))
        const child = record[key]
        if (child === undefined && rules.undefinedProperties !== 'refuse') continue
        const prefix = `${children.length === 0 ? '' : ','}${JSON.stringify(key)}:`
        children.push({
          kind: 'value',
          value: child,
          path: keyPath(path, key),
          depth: depth + 1,
          prefix,
        })
      }
    }
    out?.push(open)
    onPath.add(v)
    stack.push({ kind: 'leave', container: v, close })
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  return null
}

function keyPath(path: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`
  return path ? `${path}.${key}` : key
}

/**
 * A string with half of a UTF-16 surrogate pair (`"\ud800"` is valid JSON): not a character. It
 * would be stored, sent or shown as U+FFFD, so `\ud800` and `\udbff` would be one task. Refused
 * like the invalid UTF-8 bytes (ED A0 80) that spell it.
 */
function loneSurrogate(path: string): NonJsonValue {
  const where = path || 'input'
  return {
    path: where,
    message: `${where} has a lone surrogate (half of a UTF-16 pair), which is not text`,
  }
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

function notJson(path: string, what: string): NonJsonValue {
  const where = path || 'input'
  return { path: where, message: `${where} is ${what}, which is not JSON` }
}
