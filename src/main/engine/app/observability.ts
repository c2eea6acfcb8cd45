// Settings → Observability: where the console's batches send their spans. A target given to the
// process (`--otlp`, OTEL_EXPORTER_OTLP_*) wins, with the environment's headers; else the
// endpoint stored in Settings, with the headers stored for it — encrypted like a key, sent to that
// endpoint only, never shown: the view names the headers, never their values.
import type { ObservabilityView } from '../../../shared/contract'
import { EngineError } from '../core/errors'
import { displayUrl, parseHeaders, storedTarget, type OtlpTarget } from '../telemetry/otlp-config'
import { sendTestSpan, type OtlpTestResult } from '../telemetry/console-export'
import type { EngineParts } from './parts'

/** Where spans go now, and why not when a setting stops them. */
export function effectiveOtlpTarget(parts: Pick<EngineParts, 'otlp' | 'settings' | 'secrets'>): {
  target: OtlpTarget | null
  from: ObservabilityView['from']
  problem: string | null
} {
  if (!parts.otlp) return { target: null, from: null, problem: null }
  if (parts.otlp.processTarget) {
    return { target: parts.otlp.processTarget, from: 'process', problem: null }
  }
  const endpoint = parts.settings.get().otlpEndpoint
  if (!endpoint) return { target: null, from: null, problem: parts.otlp.problem }
  const stored = parts.secrets.otlpHeaders?.() ?? null
  // Headers stored for another endpoint stay back: the endpoint may have been changed by anyone
  // who reaches the console, and the headers are credentials.
  const headers = stored && stored.endpoint === endpoint ? stored.headers : null
  try {
    return {
      target: storedTarget(endpoint, headers, process.env),
      from: 'settings',
      problem:
        stored && headers === null
          ? `the headers stored for ${stored.endpoint} are not sent to ${endpoint}: enter them again for this endpoint`
          : null,
    }
  } catch (err) {
    return { target: null, from: 'settings', problem: (err as Error).message }
  }
}

/** Settings → Observability as the console sees it. */
export function observabilityView(
  parts: Pick<EngineParts, 'otlp' | 'settings' | 'secrets'>,
): ObservabilityView {
  const { target, from, problem } = effectiveOtlpTarget(parts)
  const stored = parts.secrets.otlpHeaders?.() ?? null
  const canStore = parts.secrets.setOtlpHeaders !== undefined && parts.secrets.available
  return {
    endpoint: parts.settings.get().otlpEndpoint,
    effectiveUrl: target ? displayUrl(target.url) : null,
    from,
    headerNames: target ? Object.keys(target.headers) : [],
    headersFrom:
      from === 'process' ? 'environment' : from === 'settings' && stored ? 'store' : null,
    headersEndpoint: stored?.endpoint ?? null,
    headersStorage: canStore
      ? null
      : parts.secrets.keysFrom === 'environment'
        ? 'headless mode keeps no headers: give the endpoint and its headers to `pacer serve` (--otlp URL with OTEL_EXPORTER_OTLP_HEADERS in its environment)'
        : (parts.secrets.reason ?? 'headers cannot be stored here'),
    problem,
  }
}

/** Stores the OTLP headers for the endpoint in Settings (checked first), or deletes them. */
export function storeOtlpHeaders(
  parts: Pick<EngineParts, 'otlp' | 'settings' | 'secrets'>,
  headers: string | null,
): void {
  const { secrets } = parts
  if (!secrets.setOtlpHeaders || (!secrets.available && headers !== null)) {
    throw new EngineError(
      'secret_storage_unavailable',
      observabilityView(parts).headersStorage ?? 'headers cannot be stored here',
      'headers',
    )
  }
  if (headers === null) {
    secrets.setOtlpHeaders(null)
    return
  }
  const endpoint = parts.settings.get().otlpEndpoint
  if (!endpoint) {
    throw new EngineError('invalid_input', 'save an endpoint before its headers', 'headers')
  }
  try {
    parseHeaders('headers', headers)
  } catch (err) {
    // The message names the entry, never its value.
    throw new EngineError('invalid_input', (err as Error).message, 'headers')
  }
  secrets.setOtlpHeaders(headers, endpoint)
}

/** The Test button: one span to the target in effect. */
export async function testOtlp(
  parts: Pick<EngineParts, 'otlp' | 'settings' | 'secrets'>,
): Promise<OtlpTestResult> {
  const { target, problem } = effectiveOtlpTarget(parts)
  if (!target) {
    return {
      ok: false,
      message: problem ?? 'no endpoint: save one above (or start with --otlp URL)',
    }
  }
  return sendTestSpan(target)
}
