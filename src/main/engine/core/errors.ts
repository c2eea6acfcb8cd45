/**
 * An error the engine answers with on purpose: a stable `code`, a message for a person, and the
 * field or line at fault. Transports turn it into `{ ok: false, error }` (transport/commands.ts).
 * The one domain error class: the parts given to the engine (the desktop's secret store) throw it
 * too, so main has a single shape for "refused on purpose".
 */
export class EngineError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message)
    this.name = 'EngineError'
  }

  /** Wraps a thrown value, keeping its own `code` when it has one (KeyReusedError, TypeError...). */
  static from(err: unknown, field?: string): EngineError {
    if (err instanceof EngineError) return err
    const e = err as { code?: unknown; message?: unknown }
    const code = typeof e?.code === 'string' ? e.code : 'invalid_input'
    const message = typeof e?.message === 'string' ? e.message : String(err)
    return new EngineError(code, field ? `${field}: ${message}` : message, field)
  }
}
