import { useState } from 'react'
import { pacer } from '../../store/api'
import { useStore } from '../../store'
import { formatInt } from '../../lib/format'

/**
 * The import's agent module: the absolute path of an ES module or TypeScript file on the machine
 * the engine runs on. The desktop app can also pick the file (its path comes from Electron); a
 * browser never tells a page where a file lives, so `pacer serve`'s console takes the path typed.
 * Keyed by the draft's file and module (import-preview.tsx): the text starts from what is set.
 */
export function AgentsField() {
  const draft = useStore((s) => s.importDraft)
  const setAgents = useStore((s) => s.setImportAgents)
  const [text, setText] = useState(draft?.agents ?? '')
  if (!draft) return null
  const pathForFile = pacer().pathForFile
  const agents = draft.preview?.agents

  return (
    <div className="agents-field">
      <div className="form-row">
        <label className="field grow">
          <span>Agent module (optional): its handlers run the tasks of their types</span>
          <input
            value={text}
            placeholder="/path/to/agent.mjs — an ES module or TypeScript file"
            spellCheck={false}
            onChange={(e) => setText(e.target.value)}
            onBlur={() => setAgents(text)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') setAgents(text)
            }}
            data-testid="import-agents-path"
          />
        </label>
        {pathForFile ? (
          <label className="button ghost">
            Choose…
            <input
              type="file"
              accept=".mjs,.js,.ts,.mts"
              hidden
              onChange={(e) => {
                const file = e.target.files?.[0]
                if (file) setAgents(pathForFile(file))
                e.target.value = ''
              }}
              data-testid="import-agents-file"
            />
          </label>
        ) : null}
      </div>
      {agents ? (
        <p className="hint" data-testid="import-agents">
          <span className="mono">{agents.path}</span> handles {agents.types.join(', ')}
          {agents.unhandled.length > 0
            ? `; ${agents.unhandled
                .map((u) => `${formatInt(u.tasks)} task(s) of type ${u.type}`)
                .join(', ')} run the built-in loop`
            : ''}
          . Changed code runs the tasks again (identity {agents.identity.slice(0, 20)}).
        </p>
      ) : null}
    </div>
  )
}
