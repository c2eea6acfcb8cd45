// `pacer run`'s request params: --params JSON, with --max-tokens and --temperature over it, checked
// against the same schema as a batch line's `params`.
import { formatPath, RequestParams, type RequestParamsView } from '../../shared/contract'
import { parseExactJson } from '../../shared/exact-json'
import { UsageError } from './common'

export interface ParamsOptions {
  params?: string
  maxTokens?: number
  temperature?: number
}

/** The run's params, or undefined when none is given; a bad one is a usage error naming it. */
export function runParams(opts: ParamsOptions): RequestParamsView | undefined {
  let given: Record<string, unknown> = {}
  if (opts.params !== undefined) {
    let parsed: unknown
    try {
      parsed = parseExactJson(opts.params)
    } catch (err) {
      throw new UsageError(`--params: not valid JSON: ${(err as Error).message}`)
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new UsageError(
        `--params: expected a JSON object like '{"top_p":0.9}', got ${opts.params}`,
      )
    }
    given = parsed as Record<string, unknown>
  }
  if (opts.maxTokens !== undefined) given = { ...given, max_tokens: opts.maxTokens }
  if (opts.temperature !== undefined) given = { ...given, temperature: opts.temperature }
  if (Object.keys(given).length === 0) return undefined
  const checked = RequestParams.safeParse(given)
  if (!checked.success) {
    const issue = checked.error.issues[0]!
    const field = formatPath(issue.path)
    const flag =
      field === 'max_tokens' && opts.maxTokens !== undefined
        ? '--max-tokens'
        : field === 'temperature' && opts.temperature !== undefined
          ? '--temperature'
          : '--params'
    throw new UsageError(
      `${flag}: ${field ? `${field}: ` : ''}${issue.message.replace(/^Unrecognized/, 'unknown')}`,
    )
  }
  return checked.data
}
