import { createHash } from 'node:crypto'

/**
 * A value that JSON cannot represent faithfully. JSON.stringify would drop it, turn it into null or
 * throw a message without a location; two different payloads would then share a fingerprint, so the
 * engine refuses them and says where they are.
 */
export class NonJsonValueError extends TypeError {
  readonly code = 'non_json_value'

  constructor(
    readonly path: string,
    what: string,
  ) {
    super(
      what.startsWith('nested deeper')
        ? `${path} is ${what}: flatten the payload`
        : `${path} is ${what}, which is not JSON`,
    )
    this.name = 'NonJsonValueError'
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const MAX_DEPTH = 256

/** Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, -0 as 0. */
export function canonicalJson(value: unknown, rootPath = 'payload'): string {
  return write(value, rootPath, [])
}

/** The claim identity of a task: sha256 hex of canonicalJson({ type, payload }). */
export function fingerprint(type: string, payload: unknown): string {
  if (typeof type !== 'string') throw new NonJsonValueError('type', describe(type))
  // Built by hand (keys already in order) so that error paths start at `payload`, not
  // `payload.payload`; a test pins it to canonicalJson({ type, payload }).
  return sha256(`{"payload":${write(payload, 'payload', [])},"type":${JSON.stringify(type)}}`)
}

/**
 * The claim identity of a task that carries an explicit idempotency key. The hashed text has a
 * different shape from fingerprint()'s, so a key can never collide with a payload fingerprint.
 */
export function keyFingerprint(key: string): string {
  if (typeof key !== 'string') throw new NonJsonValueError('key', describe(key))
  return sha256(`{"key":${JSON.stringify(key)}}`)
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

// `ancestors` holds only the objects on the current path: a value reached twice through siblings
// (a DAG) is fine in JSON, only a cycle is not.
function write(value: unknown, path: string, ancestors: object[]): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      if (!Number.isFinite(value)) throw new NonJsonValueError(path, describe(value))
      return JSON.stringify(value) // -0 already prints as 0
    case 'object':
      if (value === null) return 'null'
      break
    default:
      throw new NonJsonValueError(path, describe(value))
  }

  if (ancestors.includes(value)) throw new NonJsonValueError(path, 'a circular reference')
  // Recursion is bounded so a hostile payload gets an error naming it, not a stack overflow.
  if (ancestors.length >= MAX_DEPTH) {
    throw new NonJsonValueError(path, `nested deeper than ${MAX_DEPTH} levels`)
  }
  ancestors.push(value)
  let out: string
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) {
      throw new NonJsonValueError(path, describe(value))
    }
    const parts: string[] = []
    for (let i = 0; i < value.length; i++) {
      const itemPath = `${path}[${i}]`
      if (!(i in value)) throw new NonJsonValueError(itemPath, 'a hole in a sparse array')
      parts.push(write(value[i], itemPath, ancestors))
    }
    out = `[${parts.join(',')}]`
  } else {
    const proto: unknown = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) {
      throw new NonJsonValueError(path, describe(value))
    }
    // JSON.stringify silently skips symbol keys: two different objects would hash alike.
    const symbol = Object.getOwnPropertySymbols(value).find((s) =>
      Object.prototype.propertyIsEnumerable.call(value, s),
    )
    if (symbol !== undefined) {
      throw new NonJsonValueError(`${path}[${String(symbol)}]`, 'a symbol-keyed property')
    }
    const record = value as Record<string, unknown>
    const parts: string[] = []
    // Default sort compares UTF-16 code units: the order is the same in every JS engine.
    for (const key of Object.keys(record).sort()) {
      const keyPath = IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
      parts.push(`${JSON.stringify(key)}:${write(record[key], keyPath, ancestors)}`)
    }
    out = `{${parts.join(',')}}`
  }
  ancestors.pop()
  return out
}

function describe(value: unknown): string {
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

/**
 * What a claim deduplicates: the task (its payload fingerprint, or its key's) as run on one
 * provider, model and number of steps. The same prompt on gpt-4o and on the simulated provider
 * are different executions: reusing one for the other would hand back a wrong answer as "saved".
 */
export function executionFingerprint(
  taskFp: string,
  run: { provider: string; model: string; steps: number },
): string {
  return sha256(
    `{"model":${JSON.stringify(run.model)},"provider":${JSON.stringify(run.provider)},"steps":${run.steps},"task":${JSON.stringify(taskFp)}}`,
  )
}
