import { useState } from 'react'
import type { CommandError, SettingsView as Settings } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { TeamBacklog } from '../../components/team-backlog'
import { useStore } from '../../store'

/** Team mode: the Redis every process of this database shares its provider budget through. */
export function TeamStoreSection({ settings }: { settings: Settings }) {
  const save = useStore((s) => s.saveSettings)
  const joinTeam = useStore((s) => s.joinTeam)
  const [joining, setJoining] = useState(false)
  const [url, setUrl] = useState<string | null>(null)
  const [error, setError] = useState<CommandError | null>(null)
  const { stored, active, problem } = settings.teamStore
  const shown = url ?? stored ?? ''

  const submit = async (value: string | null): Promise<void> => {
    setError(null)
    const reply = await save({ teamStore: value })
    if (reply.ok) setUrl(null)
    else setError(reply.error)
  }

  // The store is tried again in the background; this is for an operator who just started it.
  const tryAgain = async (): Promise<void> => {
    setError(null)
    setJoining(true)
    const reply = await joinTeam()
    setJoining(false)
    if (!reply.ok) setError(reply.error)
  }

  return (
    <section className="panel settings-section">
      <div className="panel-head">
        <h2>Team mode</h2>
      </div>
      <p className="hint" data-testid="team-store-active">
        {active
          ? `This process shares the provider budget and the claims through ${active}, and appends its ledger rows there.`
          : 'This process paces on this machine alone (every process on this database shares its budget).'}
      </p>
      {problem ? (
        <p className="stopped-banner" role="status" data-testid="team-store-problem">
          <strong>Team store:</strong> {problem}{' '}
          {active ? null : (
            <button
              type="button"
              className="button"
              disabled={joining}
              onClick={() => void tryAgain()}
              data-testid="team-store-retry"
            >
              {joining ? 'Trying…' : 'Try again now'}
            </button>
          )}
        </p>
      ) : null}
      <TeamBacklog testId="team-store-backlog" />
      <div className="form-row">
        <label className="field">
          <span>Redis URL</span>
          <input
            type="text"
            placeholder="redis://HOST:6379/0"
            spellCheck={false}
            value={shown}
            onChange={(e) => setUrl(e.target.value)}
            aria-invalid={error !== null}
            data-testid="team-store-url"
          />
        </label>
        <button
          type="button"
          className="button primary"
          disabled={url === null}
          onClick={() => void submit(shown.trim() === '' ? null : shown)}
          data-testid="save-team-store"
        >
          Save
        </button>
        {stored ? (
          <button type="button" className="button" onClick={() => void submit(null)}>
            Turn off
          </button>
        ) : null}
        <span className="hint">
          Used from their next start by the processes started without <code>--store</code> or{' '}
          <code>PACER_STORE</code>. No password here: set <code>PACER_REDIS_PASSWORD</code>.
        </span>
      </div>
      <InlineError error={error} />
    </section>
  )
}
