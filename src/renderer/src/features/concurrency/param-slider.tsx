import { useRef, useState } from 'react'
import type { AimdParamsPatch, CommandError, Reply } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useDebouncedCallback } from '../../lib/hooks'
import { useStore } from '../../store'
import type { ParamSpec } from './param-specs'

const SEND_DELAY_MS = 150

/** A refused change, with what was true when it was refused. */
interface Refusal {
  error: CommandError
  applied: number
  changes: number
}

/**
 * One AIMD parameter. While dragging, the slider shows the value being set; once the engine
 * answers, it shows the value read back, so what is on screen is what the scheduler uses.
 * A refusal stays shown only while nothing has moved since: once the applied value changes or
 * another change to the partition goes through (Max raised, so Min 32 would now fit), it is old.
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
  const [refusal, setRefusal] = useState<Refusal | null>(null)
  const changes = useStore((s) => s.paramChanges[partition] ?? 0)
  // Answers can come back out of order over HTTP: only the latest change's answer counts.
  const sent = useRef(0)

  const commit = useDebouncedCallback(async (value: number) => {
    const seq = ++sent.current
    setPending(true)
    const reply = await send(spec.patch(value))
    if (seq !== sent.current) return
    setPending(false)
    setDraft(null)
    setRefusal(reply.ok ? null : { error: reply.error, applied, changes })
  }, SEND_DELAY_MS)

  const error =
    refusal && refusal.applied === applied && refusal.changes === changes ? refusal.error : null

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
          setRefusal(null)
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
          <InlineError error={error} testId={`slider-${spec.name}-error`} />
        </div>
      ) : null}
    </div>
  )
}
