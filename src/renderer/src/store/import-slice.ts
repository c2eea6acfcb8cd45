import type { BatchFormat, CommandError, CommandResults } from '../../../shared/contract'
import { batchFormatOf } from '../../../shared/batch-format'
import { parseRunBudget } from '../../../shared/run-budget'
import { decodeUtf8, invalidUtf8Message } from '../../../shared/utf8'
import { call } from './api'
import type { SliceCreator, Store } from './types'

export interface ImportDraft {
  /** Guards against a slow preview of an earlier file landing over a newer one. */
  id: number
  fileName: string
  size: number
  format: BatchFormat | null
  content: string | null
  phase: 'reading' | 'previewing' | 'ready' | 'importing' | 'failed'
  preview: CommandResults['batches:preview'] | null
  /** The preview's or the import's own failure (not the per-line errors). */
  error: CommandError | null
  skipInvalid: boolean
  audit: boolean
  /** Output tokens each step is assumed to answer; absent: the engine's default rule. */
  assumeOutputTokens?: number
  /** The agent module's absolute path on the engine's machine; absent: the built-in loop. */
  agents?: string
  /**
   * How the calls go: live, or through the vendors' batch APIs at the batch price with results
   * within 24 hours (`pacer run --batch-api`).
   */
  route: ImportRoute
  /** The run's spend cap in dollars (`pacer run --budget`); absent: none. */
  budgetUsd?: number
  /** The budget field's text is not a dollar amount: the batch cannot be queued until fixed. */
  budgetError?: string
}

export type ImportRoute = 'live' | 'batch'

/** A batch file on its way in: read, previewed with its forecast, then imported or dropped. */
export interface ImportSlice {
  importDraft: ImportDraft | null
  /** The last draft id handed out: bumped by every new file, re-preview and close. */
  importSeq: number
  lastImport: { fileName: string; batchId: string | null; enqueued: number; skipped: number } | null

  openImportFile(file: File): Promise<void>
  /** Audit mode and the output assumption change the forecast: the file is previewed again. */
  setImportOptions(options: {
    skipInvalid?: boolean
    audit?: boolean
    /** null: back to the engine's default rule. */
    assumeOutputTokens?: number | null
    route?: ImportRoute
  }): void
  /** The agent module for the batch ('' for none): the file is previewed again with it. */
  setImportAgents(path: string): void
  /** The run's cap as typed in its field: the file is previewed again with a valid one. */
  setImportBudget(text: string): void
  confirmImport(): Promise<void>
  closeImport(): void
}

/** Whether the previewed file may be queued: errors block it unless the operator skips them. */
export function canConfirmImport(draft: ImportDraft | null): boolean {
  const p = draft?.preview
  if (!draft || !p || draft.phase !== 'ready') return false
  // The Batch API is chosen, and the engine said why these tasks cannot take it.
  if (draft.route === 'batch' && p.batchApiRefusal) return false
  if (draft.budgetError !== undefined) return false
  return p.valid > 0 && (p.errors.length === 0 || draft.skipInvalid)
}

/** The draft's agent module and run cap as a command's fields: each left out when unset. */
function runOptionsOf(d: ImportDraft): { agents?: string; budgetUsd?: number } {
  return {
    ...(d.agents === undefined ? {} : { agents: d.agents }),
    ...(d.budgetUsd === undefined ? {} : { budgetUsd: d.budgetUsd }),
  }
}

/** The import's agent module, run cap and route as the command's fields: left out when default. */
function importChoices(d: ImportDraft): { agents?: string; budgetUsd?: number; batchApi?: true } {
  return { ...runOptionsOf(d), ...(d.route === 'batch' ? { batchApi: true } : {}) }
}

/** A draft's fields before its file has been read. */
const NEW_DRAFT = {
  content: null,
  phase: 'reading',
  preview: null,
  error: null,
  skipInvalid: false,
  route: 'live',
} as const satisfies Partial<ImportDraft>

/** The file's text, or why it cannot be a batch: unreadable, or not UTF-8. */
async function readText(file: File): Promise<{ text: string } | { error: CommandError }> {
  let decoded: ReturnType<typeof decodeUtf8>
  try {
    decoded = decodeUtf8(new Uint8Array(await file.arrayBuffer()))
  } catch (err) {
    return {
      error: { code: 'read_failed', message: err instanceof Error ? err.message : String(err) },
    }
  }
  if (!decoded.ok) {
    // Read as text, a bad byte would become U+FFFD: `caf\xe9` and `caf\xe8` one task.
    const { line, byte, value } = decoded.invalid
    const message = `${file.name}: line ${line}, ${invalidUtf8Message(byte, value)}: save the file as UTF-8`
    return { error: { code: 'invalid_utf8', message } }
  }
  return { text: decoded.text }
}

/**
 * The import's setImportBudget: the field's text as the run's cap. Not a dollar amount: the draft
 * keeps why (Queue stays off). A new cap (or none) is one of the forecast's cap lines: the file is
 * previewed again under a new id, so a slower earlier answer is dropped.
 */
function budgetSetter(
  get: () => Store,
  set: (patch: Partial<Store>) => void,
  runPreview: (id: number) => Promise<void>,
): (text: string) => void {
  return (text) => {
    const d = get().importDraft
    if (!d) return
    const parsed = parseRunBudget(text)
    if ('error' in parsed) return set({ importDraft: { ...d, budgetError: parsed.error } })
    const { budgetError: _fixed, budgetUsd: _was, ...rest } = d
    const next: ImportDraft = parsed.usd === undefined ? rest : { ...rest, budgetUsd: parsed.usd }
    if (parsed.usd === d.budgetUsd || d.content === null) return set({ importDraft: next })
    const id = get().importSeq + 1
    set({ importSeq: id, importDraft: { ...next, id, phase: 'previewing', error: null } })
    void runPreview(id)
  }
}

export const createImportSlice: SliceCreator<ImportSlice> = (set, get) => {
  const patchDraft = (id: number, patch: Partial<ImportDraft>): boolean => {
    const d = get().importDraft
    if (!d || d.id !== id) return false
    set({ importDraft: { ...d, ...patch } })
    return true
  }

  const runPreview = async (id: number): Promise<void> => {
    const d = get().importDraft
    if (!d || d.id !== id || d.content === null || d.format === null) return
    const { fileName, content, format, audit, assumeOutputTokens } = d
    const assumed = assumeOutputTokens === undefined ? {} : { assumeOutputTokens }
    const reply = await call((api) =>
      api.previewBatch({ fileName, content, format, audit, ...assumed, ...runOptionsOf(d) }),
    )
    if (reply.ok) patchDraft(id, { phase: 'ready', preview: reply.value })
    else patchDraft(id, { phase: 'failed', error: reply.error })
  }

  return {
    importDraft: null,
    importSeq: 0,
    lastImport: null,

    openImportFile: async (file) => {
      const id = get().importSeq + 1
      const format = batchFormatOf(file.name)
      set({
        importSeq: id,
        importDraft: {
          ...NEW_DRAFT,
          id,
          fileName: file.name,
          size: file.size,
          format,
          audit: get().settings?.audit ?? false,
        },
      })
      if (!format) {
        patchDraft(id, {
          phase: 'failed',
          error: {
            code: 'unsupported_file',
            message: `${file.name} is not a batch file: use .jsonl (one JSON task per line) or .csv`,
          },
        })
        return
      }
      const read = await readText(file)
      if ('error' in read) {
        patchDraft(id, { phase: 'failed', error: read.error })
        return
      }
      if (!patchDraft(id, { content: read.text, phase: 'previewing' })) return
      await runPreview(id)
    },

    setImportOptions: ({ assumeOutputTokens, ...options }) => {
      const d = get().importDraft
      if (!d) return
      const next: ImportDraft = { ...d, ...options }
      if (assumeOutputTokens !== undefined)
        next.assumeOutputTokens = assumeOutputTokens ?? undefined
      // Audit (no dedup savings) and the output assumption change the forecast: ask again.
      const reforecast = next.audit !== d.audit || next.assumeOutputTokens !== d.assumeOutputTokens
      if (reforecast && d.content !== null) {
        const id = get().importSeq + 1
        set({ importSeq: id, importDraft: { ...next, id, phase: 'previewing', error: null } })
        void runPreview(id)
        return
      }
      set({ importDraft: next })
    },

    setImportAgents: (path) => {
      const d = get().importDraft
      const agents = path.trim() === '' ? undefined : path.trim()
      if (!d || agents === d.agents) return
      // The module decides which tasks it handles and their fingerprints: preview again.
      const id = get().importSeq + 1
      const phase = d.content === null ? d.phase : 'previewing'
      set({ importSeq: id, importDraft: { ...d, agents, id, phase, error: null } })
      if (d.content !== null) void runPreview(id)
    },

    setImportBudget: budgetSetter(get, set, runPreview),

    confirmImport: async () => {
      const d = get().importDraft
      if (!d || !canConfirmImport(d) || d.content === null || d.format === null) return
      patchDraft(d.id, { phase: 'importing', error: null })
      const reply = await call((api) =>
        api.importBatch({
          fileName: d.fileName,
          content: d.content!,
          format: d.format!,
          skipInvalid: d.skipInvalid,
          audit: d.audit,
          ...importChoices(d),
        }),
      )
      if (!reply.ok) {
        patchDraft(d.id, { phase: 'ready', error: reply.error })
        return
      }
      if (get().importDraft?.id === d.id) set({ importDraft: null })
      const { batchId, enqueued, skipped } = reply.value
      set({ lastImport: { fileName: d.fileName, batchId, enqueued, skipped } })
      void get().loadBatches()
      get().refreshTasks()
    },

    closeImport: () => set({ importSeq: get().importSeq + 1, importDraft: null }),
  }
}
