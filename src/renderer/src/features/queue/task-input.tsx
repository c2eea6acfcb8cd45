// The task drawer's input and journal: what the task was asked, and the calls its execution
// journaled while unfinished, each with a copy button.
import type { TaskInputView, TaskJournalEntryView } from '../../../../shared/contract'
import { formatUsd } from '../../../../shared/format'
import { CopyButton } from '../../components/copy-button'
import { formatDateTime } from '../../lib/format'

/** A block of text with its heading and a copy button. */
export function TextBlock({
  title,
  text,
  testId,
}: {
  title: string
  text: string
  testId: string
}) {
  return (
    <div className="task-detail-block">
      <div className="task-detail-block-head">
        <h3>{title}</h3>
        <CopyButton text={text} testId={`${testId}-copy`} />
      </div>
      <pre className="task-detail-text" data-testid={testId}>
        {text}
      </pre>
    </div>
  )
}

/** What the task was asked: the model, the agent module, the payload, params and messages. */
export function InputSection({ input }: { input: TaskInputView }) {
  const messagesJson =
    input.messages === null
      ? null
      : JSON.stringify(
          input.messages.map((m) => ({ role: m.role, content: m.content })),
          null,
          2,
        )
  return (
    <section className="task-detail-input" aria-label="Input" data-testid="task-detail-input">
      <h3 className="task-detail-section">Input</h3>
      <dl className="task-detail-facts">
        <dt>Model</dt>
        <dd className="mono" data-testid="task-detail-model">
          {input.provider} · {input.model}
        </dd>
        <dt>Steps</dt>
        <dd>{input.steps}</dd>
        <dt>Runs on</dt>
        <dd data-testid="task-detail-agent">
          {input.agent ? (
            <span className="mono" title={input.agent.path}>
              {basename(input.agent.path)} ({input.agent.identity}
              {input.agent.code !== input.agent.identity ? `; now ${input.agent.code}` : ''})
            </span>
          ) : (
            'the built-in loop'
          )}
        </dd>
      </dl>
      {input.payload !== null ? (
        <TextBlock title="Payload" text={input.payload} testId="task-detail-payload" />
      ) : null}
      {input.params !== null ? (
        <TextBlock title="Params" text={input.params} testId="task-detail-params" />
      ) : (
        <p className="muted" data-testid="task-detail-params-none">
          Params: none (the provider’s defaults).
        </p>
      )}
      {input.messages !== null && messagesJson !== null ? (
        <div className="task-detail-block">
          <div className="task-detail-block-head">
            <h3>Messages</h3>
            <CopyButton text={messagesJson} testId="task-detail-messages-copy" />
          </div>
          <ol className="task-detail-messages" data-testid="task-detail-messages">
            {input.messages.map((m, i) => (
              <li key={i} data-role={m.role}>
                <span className="badge">{m.role}</span>
                <pre className="task-detail-text">{m.content ?? '(no content)'}</pre>
                {m.fields !== null ? <pre className="task-detail-text">{m.fields}</pre> : null}
              </li>
            ))}
          </ol>
          {input.steps > 1 ? (
            <p className="hint">
              Steps 2–{input.steps} resend these with the answers so far and a “Continue: step n of{' '}
              {input.steps}” turn.
            </p>
          ) : null}
        </div>
      ) : input.agent ? (
        <p className="hint" data-testid="task-detail-agent-messages">
          The agent module writes its messages (ctx.chat); each call is in the journal and the
          ledger rows below.
        </p>
      ) : null}
    </section>
  )
}

function basename(path: string): string {
  return path.split(/[\\/]/).pop() || path
}

/**
 * The execution's call journal while it is unfinished (or was interrupted): each call's answer and
 * each agent step's value. Once the result is stored the journal is dropped; the ledger keeps the calls.
 */
export function JournalEntries({ entries }: { entries: TaskJournalEntryView[] }) {
  if (entries.length === 0) return null
  return (
    <section className="task-detail-journal" aria-label="Journal">
      <h3 className="task-detail-section">Journal</h3>
      <ol data-testid="task-detail-journal">
        {entries.map((e) => (
          <li
            key={e.idx}
            data-testid="task-detail-journal-entry"
            data-kind={e.kind}
            data-state={e.state}
          >
            <div className="task-detail-block-head">
              <span>
                <span className="badge">
                  {e.kind} {e.idx}
                </span>{' '}
                <span className="muted">
                  {formatDateTime(e.ts)}
                  {e.model ? ` · ${e.model}` : ''}
                  {e.costMicros !== null ? ` · ${formatUsd(e.costMicros)}` : ''}
                  {e.state === 'sent' ? ' · sent, no answer written' : ''}
                </span>
              </span>
              {e.text !== null ? (
                <CopyButton text={e.text} testId="task-detail-journal-copy" />
              ) : null}
            </div>
            {e.text !== null ? <pre className="task-detail-text">{e.text}</pre> : null}
          </li>
        ))}
      </ol>
    </section>
  )
}
