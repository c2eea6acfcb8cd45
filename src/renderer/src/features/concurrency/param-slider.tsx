import { useState } from 'react'
import type { AimdParamsPatch, CommandError, Reply } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useDebouncedCallback } from '../../lib/hooks'
import type { ParamSpec } from './param-specs'

const SEND_DELAY_MS = 150

/**
 * One AIMD parameter. While dragging, the slider shows the value being set; once the engine
 * answers, it shows the value read back, so what is on screen is what the scheduler uses.
 */
export function ParamSlider({
  spec,
  applied,
  partition,
  send,
}: {
  spec: ParamSpec
  applied: number
  partition: string
  send: (patch: AimdParamsPatch) => Promise<Reply<unknown>>
}) {
  const [draft, setDraft] = useState<number | null>(null)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<CommandError | null>(null)

  const commit = useDebouncedCallback(async (value: number) => {
    setPending(true)
    const reply = await send(spec.patch(value))
    setPending(false)
    setDraft(null)
    setError(reply.ok ? null : reply.error)
  }, SEND_DELAY_MS)

  const value = draft ?? applied
  const id = `slider-${partition}-${spec.name}`
  return (
    <div className={`param${error ? ' param-invalid' : ''}`}>
      <label htmlFor={id} title={spec.help}>
        {spec.label}
      </label>
      <input
        id={id}
        type="range"
        min={spec.min}
        max={Math.max(spec.max, applied)}
        step={spec.step}
        value={value}
        onChange={(e) => {
          const v = Number(e.target.value)
          setDraft(v)
          setError(null)
          commit(v)
        }}
        data-testid={`slider-${spec.name}`}
        data-applied={applied}
      />
      <output htmlFor={id} className={`param-value${pending || draft !== null ? ' pending' : ''}`}>
        {spec.format(value)}
      </output>
      <span className="param-applied" data-testid={`slider-${spec.name}-applied`}>
        {draft !== null && draft !== applied ? `now ${spec.format(applied)}` : ''}
      </span>
      {error ? (
        <div className="param-error">
          <InlineError error={error} />
        </div>
      ) : null}
    </div>
  )
}
