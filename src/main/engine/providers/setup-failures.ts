// Answers that are about the setup, not the task: a key refused or missing, a model unknown, an
// account out of credit, a server that is not there. Every other task of the partition would get
// the same answer, so the partition stops after the first one instead of spending a request (and,
// for a refused connection, four attempts) per task.
import { quotaExhausted, type Answer } from './classify'
import { BATCH_API_UNSUPPORTED } from './batch/constants'

export type SetupFailureKind =
  | 'missing_key'
  | 'bad_key'
  | 'forbidden'
  | 'unknown_model'
  | 'no_credit'
  | 'unreachable'
  | 'no_batch_api'

/** Why a partition stopped, in words an operator can act on. */
export interface SetupFailure {
  kind: SetupFailureKind
  /** The HTTP status, or null when no answer came (unreachable) or none was sent (missing key). */
  status: number | null
  /** What the provider (or the connection) said. */
  said: string
  /** What to do about it. */
  todo: string
}

/** The error code a provider puts on the answer it makes up when it has no key to send. */
export const MISSING_KEY_CODE = 'pacer_missing_api_key'

/** Where the CLI reads each provider's key from. */
const KEY_VARIABLES: Readonly<Record<string, string>> = Object.freeze({
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-compatible': 'PACER_OPENAI_COMPATIBLE_API_KEY',
})

/** The code of the error a call gets when fetch refuses the base URL's port (http.ts). */
export const BAD_PORT_CODE = 'PACER_BAD_PORT'

// Connection errors that say nothing listens there, or the name does not resolve, or fetch will
// not connect to the port at all: no retry helps.
const UNREACHABLE_CODES = new Set([
  BAD_PORT_CODE,
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
])

/** The connection error code down an error's cause chain (fetch nests it), if it is one of ours. */
export function unreachableCode(err: unknown, depth = 0): string | undefined {
  if (depth > 10 || err === null || typeof err !== 'object') return undefined
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return code
  // Every address of a host refused: an AggregateError of one error per address.
  for (const e of (err as { errors?: unknown[] }).errors ?? []) {
    const found = unreachableCode(e, depth + 1)
    if (found) return found
  }
  return unreachableCode((err as { cause?: unknown }).cause, depth + 1)
}

/**
 * The setup failure an answer is, or undefined when it is about the task (or transient).
 * `unreachable` is the connection error code of a request that got no answer.
 */
export function setupFailure(
  provider: string,
  res: Answer,
  unreachable?: string,
): SetupFailure | undefined {
  const said = res.error ?? `HTTP ${res.status}`
  const keyPlace = `${KEY_VARIABLES[provider] ?? 'the API key'} or the key in Settings`
  if (unreachable !== undefined) {
    const todo =
      unreachable === BAD_PORT_CODE
        ? `no request can be sent there: run the server on another port and fix the ${provider} base URL`
        : `${unreachable === 'ECONNREFUSED' ? 'nothing listens there' : 'the host is unknown'}: start the server, or fix the ${provider} base URL`
    return { kind: 'unreachable', status: null, said, todo }
  }
  if (res.errorCodes?.includes(BATCH_API_UNSUPPORTED)) {
    return {
      kind: 'no_batch_api',
      status: res.status,
      said,
      todo: 'run without --batch-api, or give a --base-url whose server has them',
    }
  }
  if (res.errorCodes?.includes(MISSING_KEY_CODE)) {
    return { kind: 'missing_key', status: null, said, todo: `set ${keyPlace}` }
  }
  if (quotaExhausted(res) !== undefined) {
    return {
      kind: 'no_credit',
      status: res.status,
      said,
      todo: 'add credit or raise the spend limit of the account',
    }
  }
  switch (res.status) {
    case 401:
      return { kind: 'bad_key', status: 401, said, todo: `check ${keyPlace}` }
    case 403:
      return {
        kind: 'forbidden',
        status: 403,
        said,
        todo: 'give the key access to this model (project, organization or region), or use another model',
      }
    case 404:
      return {
        kind: 'unknown_model',
        status: 404,
        said,
        todo: `check the model name (--model, or the task's "model") and the ${provider} base URL`,
      }
    default:
      return undefined
  }
}

/** The one line that says a partition stopped: provider, model, status, what it said, what to do. */
export function describeStop(partition: string, f: SetupFailure): string {
  const status = f.status === null ? '' : `HTTP ${f.status}: `
  return `${partition} stopped: ${status}${f.said} (${f.todo}; its tasks stay queued)`
}
