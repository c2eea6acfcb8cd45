// How a parsed task gets its provider and model (the run's defaults, or the settings') and its
// claim identity: plain data in, so a worker thread reading a big file can do it too.
import type { LineError } from '../../shared/contract'
import type { ParsedTask } from './batch-file'
import { executionFingerprint } from './fingerprint'

/** A task ready to queue: provider and model resolved, `fp` is its claim identity. */
export interface ResolvedTask extends ParsedTask {
  provider: string
  model: string
  /** The execution's fingerprint (task + provider + model + steps). */
  runFp: string
}

/** What resolving needs to know: the providers there are, and the defaults. */
export interface ResolveRules {
  providers: readonly string[]
  defaultProvider: string
  /** null: a task on the default provider must name its model. */
  defaultModel: string | null
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
    const runFp = executionFingerprint(t.payloadFp, { provider, model, steps: t.steps })
    const fp = t.key === null ? runFp : t.fp
    if (!inPlace) return { ...t, provider, model, runFp, fp }
    const resolved = t as ResolvedTask
    resolved.provider = provider
    resolved.model = model
    resolved.runFp = runFp
    resolved.fp = fp
    return resolved
  }
}
