import type { CommandError } from '../../../shared/contract'

/** A command's error, shown next to the control that sent it, with the field when known. */
export function InlineError({
  error,
  testId,
}: {
  error: CommandError | string | null | undefined
  testId?: string
}) {
  if (!error) return null
  const e = typeof error === 'string' ? { message: error, field: undefined } : error
  // Validation messages often start with the same path the field names ("params.min: …").
  const message =
    e.field && e.message.startsWith(`${e.field}: `)
      ? e.message.slice(e.field.length + 2)
      : e.message
  return (
    <div className="inline-error" role="alert" data-testid={testId}>
      {e.field ? <code className="inline-error-field">{e.field}</code> : null}
      <span>{message}</span>
    </div>
  )
}
