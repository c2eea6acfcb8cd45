import { hash } from 'node:crypto'
import { canonicalJsonOf, nonJsonAt, type NonJsonValue } from '../../../shared/json-value'

/**
 * A value that JSON cannot represent faithfully. JSON.stringify would drop it, turn it into null or
 * throw a message without a location; two different payloads would then share a fingerprint, so the
 * engine refuses them and says where they are (shared/json-value words and paths the message).
 */
export class NonJsonValueError extends TypeError {
  readonly code = 'non_json_value'
  readonly path: string

  constructor(found: NonJsonValue) {
    super(found.message)
    this.path = found.path
    this.name = 'NonJsonValueError'
  }
}

/** Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, -0 as 0. */
export function canonicalJson(value: unknown, rootPath = 'payload'): string {
  // Most payloads (JSON just parsed, keys in order) are already canonical: JSON.stringify writes
  // them the same, three times faster. Anything else takes the walk, which also names what is wrong.
  if (inCanonicalForm(value, 0)) return JSON.stringify(value)
  const written = canonicalJsonOf(value, rootPath)
  if (!written.ok) throw new NonJsonValueError(written.nonJson)
  return written.json
}

const MAX_DEPTH = 256

/**
 * Whether JSON.stringify(value) is its canonical JSON: plain objects whose keys come in UTF-16
 * order (Object.keys puts integer-like keys first: those fail this), arrays without holes, finite
 * numbers (a LosslessNumber is an object: the walk writes it), strings without a lone surrogate,
 * booleans, null, nested no deeper than canonicalJsonOf allows. A subset of what
 * canonicalJsonOf accepts, so the two agree wherever this says yes.
 */
function inCanonicalForm(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      return value.isWellFormed()
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value)
    case 'object':
      break
    default:
      return false
  }
  if (value === null) return true
  if (depth >= MAX_DEPTH) return false
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || !inCanonicalForm(value[i], depth + 1)) return false
    }
    return true
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false
  if (Object.getOwnPropertySymbols(value).length > 0) return false
  const record = value as Record<string, unknown>
  let previous: string | null = null
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) return false
    if (previous !== null && !(previous < key)) return false
    if (!key.isWellFormed()) return false
    if (!inCanonicalForm(record[key], depth + 1)) return false
    previous = key
  }
  return true
}

/** The claim identity of a task: sha256 hex of canonicalJson({ type, payload }). */
export function fingerprint(type: string, payload: unknown): string {
  if (typeof type !== 'string') throw new NonJsonValueError(nonJsonAt('type', type))
  return fingerprintOfCanonical(type, canonicalJson(payload, 'payload'))
}

/** fingerprint() of a payload already in canonical JSON (a batch file line: written once). */
export function fingerprintOfCanonical(type: string, payloadJson: string): string {
  // Built by hand (keys already in order) so that error paths start at `payload`, not
  // `payload.payload`; a test pins it to canonicalJson({ type, payload }).
  return sha256(`{"payload":${payloadJson},"type":${JSON.stringify(type)}}`)
}

/**
 * The claim identity of a task that carries an explicit idempotency key. The hashed text has a
 * different shape from fingerprint()'s, so a key can never collide with a payload fingerprint.
 */
export function keyFingerprint(key: string): string {
  if (typeof key !== 'string') throw new NonJsonValueError(nonJsonAt('key', key))
  return sha256(`{"key":${JSON.stringify(key)}}`)
}

function sha256(text: string): string {
  // The one-shot form: a million lines hash in a second instead of two and a half.
  return hash('sha256', text, 'hex')
}

/**
 * What a claim deduplicates: the task (its payload fingerprint, or its key's) as run on one
 * provider, model, number of steps and request params. The same prompt on gpt-4o and on the simulated provider
 * are different executions: reusing one for the other would hand back a wrong answer as "saved".
 */
export function executionFingerprint(
  taskFp: string,
  run: {
    provider: string
    model: string
    steps: number
    params?: string | null
    /** The agent module's identity (agents/module.ts) for a task its code runs. */
    agent?: string | null
  },
): string {
  // Request params (canonical JSON: their order does not matter) are part of what runs; a task
  // without any hashes as it did before params existed, so stored results stay reusable.
  const params = run.params == null ? '' : `"params":${run.params},`
  // Likewise the agent's code: changed code is another execution; no agent hashes as before.
  const agent = run.agent == null ? '' : `"agent":${JSON.stringify(run.agent)},`
  return sha256(
    `{${agent}"model":${JSON.stringify(run.model)},${params}"provider":${JSON.stringify(run.provider)},"steps":${run.steps},"task":${JSON.stringify(taskFp)}}`,
  )
}
