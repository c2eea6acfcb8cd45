// How a parsed task gets its provider and model (the run's defaults, or the settings') and its
// claim identity: plain data in, so a worker thread reading a big file can do it too.
import type { LineError } from '../../../shared/contract'
import type { ParsedTask } from './batch-file'
import { canonicalJson, executionFingerprint } from '../core/fingerprint'
import { ANTHROPIC_UNSUPPORTED_PARAMS, unsupportedByAnthropic } from '../providers/anthropic'
import type { RequestParams } from '../core/types'

/** A task ready to queue: provider and model resolved, `fp` is its claim identity. */
export interface ResolvedTask extends ParsedTask {
  provider: string
  model: string
  /** The execution's fingerprint (task + provider + model + steps + params). */
  runFp: string
  /** Canonical JSON of the request params (the line's over the run's); null: none. */
  paramsJson: string | null
}

/** What resolving needs to know: the providers there are, and the defaults. */
export interface ResolveRules {
  providers: readonly string[]
  defaultProvider: string
  /** null: a task on the default provider must name its model. */
  defaultModel: string | null
  /** The run's request params (`pacer run --max-tokens` ...): a line's own win, key by key. */
  params?: RequestParams
  /** The run's agent module: the tasks of its types get its identity in their fingerprint. */
  agent?: { identity: string; types: readonly string[] }
}

/**
 * Resolves one task at a time; a problem is pushed to `errors`, never thrown. `inPlace` fills the
 * parsed task in instead of copying it (a streamed file's line, which nobody else holds).
 */
export function resolverFor(
  rules: ResolveRules,
  inPlace = false,
): (t: ParsedTask, errors: LineError[]) => ResolvedTask | null {
  const { defaultProvider, defaultModel } = rules
  const known = new Set(rules.providers)
  const runParams = rules.params !== undefined && Object.keys(rules.params).length > 0
  const agentTypes = new Set(rules.agent?.types)
  return (t, errors) => {
    const provider = t.provider ?? defaultProvider
    if (!known.has(provider)) {
      errors.push({
        line: t.line,
        field: 'provider',
        message: `unknown provider "${provider}" (known: ${rules.providers.join(', ')})`,
      })
      return null
    }
    const model = t.model ?? (provider === defaultProvider ? defaultModel : null)
    if (!model) {
      errors.push({
        line: t.line,
        field: 'model',
        message:
          provider === defaultProvider
            ? `required: no default model is set for "${provider}"`
            : `required for provider "${provider}": only the default provider (${defaultProvider}) has a default model`,
      })
      return null
    }
    const params = runParams || t.params ? { ...rules.params, ...t.params } : null
    if (params && provider === 'anthropic') {
      const unsupported = unsupportedByAnthropic(params)
      if (unsupported) {
        const field = ANTHROPIC_UNSUPPORTED_PARAMS.find((p) => params[p] !== undefined)
        errors.push({ line: t.line, field: `params.${field}`, message: unsupported })
        return null
      }
    }
    const paramsJson = params && Object.keys(params).length > 0 ? canonicalJson(params) : null
    const runFp = executionFingerprint(t.payloadFp, {
      provider,
      model,
      steps: t.steps,
      params: paramsJson,
      // A task with its own key keeps the key's identity whatever code runs it: the key says so.
      agent: t.key === null && agentTypes.has(t.type) ? rules.agent!.identity : null,
    })
    const fp = t.key === null ? runFp : t.fp
    if (!inPlace) return { ...t, provider, model, runFp, fp, paramsJson }
    const resolved = t as ResolvedTask
    resolved.provider = provider
    resolved.model = model
    resolved.runFp = runFp
    resolved.fp = fp
    resolved.paramsJson = paramsJson
    return resolved
  }
}
