import { describe, expect, it } from 'vitest'
import type { CommandResult, Reply, SettingsView } from '../../../../src/shared/contract'
import { canConfirmImport, type ImportDraft } from '../../../../src/renderer/src/store/import-slice'
import { until } from '../../../helpers/until'
import { deferred, fail, ok, storeOnFakePacer } from './fake-pacer'

type Preview = CommandResult<'batches:preview'>

/** The part of File the slice reads. */
function file(name: string, content: string | Uint8Array | Error): File {
  return {
    name,
    size: typeof content === 'string' ? content.length : 0,
    arrayBuffer: async () => {
      if (content instanceof Error) throw content
      return typeof content === 'string' ? new TextEncoder().encode(content).buffer : content.buffer
    },
  } as unknown as File
}

const preview = (valid: number, errors = 0): Preview => ({
  format: 'jsonl',
  valid,
  errors: Array.from({ length: errors }, (_, i) => ({ line: i + 1, message: 'bad' })),
  forecast: null,
})

const LINES = '{"type":"t","payload":{}}\n'
/** What importing a.jsonl with the defaults sends. */
const IMPORTED = {
  fileName: 'a.jsonl',
  content: LINES,
  format: 'jsonl',
  skipInvalid: false,
  audit: false,
}

describe('canConfirmImport', () => {
  const draft = (p: Preview | null, patch: Partial<ImportDraft> = {}): ImportDraft => ({
    id: 1,
    fileName: 'a.jsonl',
    size: 1,
    format: 'jsonl',
    content: LINES,
    phase: 'ready',
    preview: p,
    error: null,
    skipInvalid: false,
    audit: false,
    route: 'live',
    ...patch,
  })

  it('needs a ready preview with valid lines, and errors skipped if there are any', () => {
    expect(canConfirmImport(null)).toBe(false)
    expect(canConfirmImport(draft(null))).toBe(false)
    expect(canConfirmImport(draft(preview(2)))).toBe(true)
    expect(canConfirmImport(draft(preview(2), { phase: 'previewing' }))).toBe(false)
    expect(canConfirmImport(draft(preview(0)))).toBe(false)
    expect(canConfirmImport(draft(preview(2, 1)))).toBe(false)
    expect(canConfirmImport(draft(preview(2, 1), { skipInvalid: true }))).toBe(true)
  })

  it('refuses the Batch API route when the engine said why the tasks cannot take it', () => {
    const refused = { ...preview(2), batchApiRefusal: 'the simulator has no batch API' }
    expect(canConfirmImport(draft(refused, { route: 'batch' }))).toBe(false)
    expect(canConfirmImport(draft(refused, { route: 'live' }))).toBe(true)
    expect(
      canConfirmImport(draft({ ...preview(2), batchApiRefusal: null }, { route: 'batch' })),
    ).toBe(true)
  })
})

describe('import slice', () => {
  it('reads a file and previews it, auditing as the settings say', async () => {
    const { store, fake } = storeOnFakePacer()
    store.setState({ settings: { audit: true } as SettingsView })
    const answer = deferred<Reply<Preview>>()
    fake.on('batches:preview', () => answer.promise)
    const opened = store.getState().openImportFile(file('tasks.JSONL', LINES))
    expect(store.getState().importDraft).toMatchObject({ phase: 'reading', format: 'jsonl' })
    await until(() => store.getState().importDraft?.phase === 'previewing')
    expect(store.getState().importDraft).toMatchObject({ content: LINES })
    answer.resolve(ok(preview(1)))
    await opened
    expect(store.getState().importDraft).toMatchObject({
      phase: 'ready',
      preview: preview(1),
      audit: true,
    })
    expect(fake.inputs('batches:preview')).toEqual([
      { fileName: 'tasks.JSONL', content: LINES, format: 'jsonl', audit: true },
    ])
  })

  it('refuses a file that is not a batch file without asking the engine', async () => {
    const { store, fake } = storeOnFakePacer()
    await store.getState().openImportFile(file('notes.txt', 'hello'))
    expect(store.getState().importDraft).toMatchObject({
      phase: 'failed',
      format: null,
      error: { code: 'unsupported_file' },
    })
    expect(fake.calls).toEqual([])
  })

  it('says why a file could not be read, and why a preview failed', async () => {
    const { store, fake } = storeOnFakePacer()
    await store.getState().openImportFile(file('a.csv', new Error('permission denied')))
    expect(store.getState().importDraft).toMatchObject({
      phase: 'failed',
      error: { code: 'read_failed', message: 'permission denied' },
    })
    fake.on('batches:preview', () => fail('too_large', 'file over 50 MB'))
    await store.getState().openImportFile(file('a.csv', 'type,payload\n'))
    expect(store.getState().importDraft).toMatchObject({
      phase: 'failed',
      format: 'csv',
      error: { code: 'too_large' },
    })
  })

  it('refuses a file that is not UTF-8 with its line and byte, without asking the engine', async () => {
    const { store, fake } = storeOnFakePacer()
    const bytes = new TextEncoder().encode(
      '{"type":"t","payload":"café"}\n{"type":"t","payload":"cafX"}\n',
    )
    bytes[bytes.lastIndexOf(0x58)] = 0xe9 // latin-1 é where the X was
    await store.getState().openImportFile(file('latin1.jsonl', bytes))
    expect(store.getState().importDraft).toMatchObject({
      phase: 'failed',
      error: {
        code: 'invalid_utf8',
        message: 'latin1.jsonl: line 2, byte 27: invalid UTF-8 (0xE9): save the file as UTF-8',
      },
    })
    expect(fake.calls).toEqual([])
  })

  it('a slow preview of an earlier file never lands over a newer one', async () => {
    const { store, fake } = storeOnFakePacer()
    const slow = deferred<Reply<Preview>>()
    fake.on('batches:preview', () => slow.promise)
    const first = store.getState().openImportFile(file('first.jsonl', LINES))
    await until(() => fake.inputs('batches:preview').length === 1)
    fake.on('batches:preview', () => ok(preview(2)))
    await store.getState().openImportFile(file('second.jsonl', LINES + LINES))
    expect(store.getState().importSeq).toBe(2)
    slow.resolve(ok(preview(1)))
    await first
    expect(store.getState().importDraft).toMatchObject({
      id: 2,
      fileName: 'second.jsonl',
      preview: { valid: 2 },
    })
  })

  it('previews again when audit changes, and only then', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:preview', ({ audit }) => ok(preview(audit ? 3 : 1)))
    await store.getState().openImportFile(file('a.jsonl', LINES))
    store.getState().setImportOptions({ skipInvalid: true })
    expect(fake.inputs('batches:preview')).toHaveLength(1)
    expect(store.getState().importDraft).toMatchObject({ skipInvalid: true, id: 1 })

    store.getState().setImportOptions({ audit: true })
    expect(store.getState().importDraft).toMatchObject({ phase: 'previewing', id: 2, audit: true })
    await until(() => store.getState().importDraft?.phase === 'ready')
    expect(store.getState().importDraft).toMatchObject({ preview: { valid: 3 } })
    expect(fake.inputs('batches:preview').map((i) => i.audit)).toEqual([false, true])
  })

  it('previews again with the output tokens assumed, and back without them', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:preview', () => ok(preview(1)))
    await store.getState().openImportFile(file('a.jsonl', LINES))
    store.getState().setImportOptions({ assumeOutputTokens: 250 })
    expect(store.getState().importDraft).toMatchObject({ phase: 'previewing', id: 2 })
    await until(() => store.getState().importDraft?.phase === 'ready')
    // The same number again is no change: no new preview.
    store.getState().setImportOptions({ assumeOutputTokens: 250 })
    store.getState().setImportOptions({ assumeOutputTokens: null })
    await until(() => store.getState().importDraft?.phase === 'ready')
    const asked = fake.inputs('batches:preview').map((i) => i.assumeOutputTokens)
    expect(asked).toEqual([undefined, 250, undefined])
    expect('assumeOutputTokens' in fake.inputs('batches:preview')[2]!).toBe(false)
  })

  it('previews again with the agent module chosen, and imports with it', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:preview', ({ agents }) =>
      agents === '/m/bad.mjs' ? fail('agent_module') : ok(preview(agents ? 2 : 1)),
    )
    fake.on('batches:import', () => ok({ batchId: 'b8', enqueued: 2, skipped: 0, errors: [] }))
    fake.on('batches:list', () => ok([]))
    fake.on('tasks:list', () => ok({ rows: [], total: 0 }))
    await store.getState().openImportFile(file('a.jsonl', LINES))
    store.getState().setImportAgents('/m/bad.mjs')
    await until(() => store.getState().importDraft?.phase === 'failed')
    expect(store.getState().importDraft).toMatchObject({ error: { code: 'agent_module' } })
    store.getState().setImportAgents('  /m/agent.mjs ')
    await until(() => store.getState().importDraft?.phase === 'ready')
    // The same path again asks nothing more.
    store.getState().setImportAgents('/m/agent.mjs')
    expect(fake.inputs('batches:preview').map((i) => i.agents)).toEqual([
      undefined,
      '/m/bad.mjs',
      '/m/agent.mjs',
    ])
    await store.getState().confirmImport()
    expect(fake.inputs('batches:import')).toEqual([{ ...IMPORTED, agents: '/m/agent.mjs' }])
  })

  it('imports through the Batch API when that route is chosen, without asking the forecast again', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:preview', () => ok({ ...preview(1), batchApiRefusal: null }))
    fake.on('batches:import', () => ok({ batchId: 'b9', enqueued: 1, skipped: 0, errors: [] }))
    fake.on('batches:list', () => ok([]))
    fake.on('tasks:list', () => ok({ rows: [], total: 0 }))
    await store.getState().openImportFile(file('a.jsonl', LINES))
    expect(store.getState().importDraft?.route).toBe('live')
    store.getState().setImportOptions({ route: 'batch' })
    expect(store.getState().importDraft).toMatchObject({ route: 'batch', phase: 'ready' })
    // Both prices are in the one preview: the choice asks nothing more.
    expect(fake.inputs('batches:preview')).toHaveLength(1)
    await store.getState().confirmImport()
    expect(fake.inputs('batches:import')).toEqual([{ ...IMPORTED, batchApi: true }])
  })

  it('imports the previewed file, then reloads the batches and the table', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:preview', () => ok(preview(1)))
    fake.on('batches:import', () => ok({ batchId: 'b7', enqueued: 1, skipped: 0, errors: [] }))
    fake.on('batches:list', () => ok([]))
    fake.on('tasks:list', () => ok({ rows: [], total: 0 }))
    await store.getState().openImportFile(file('a.jsonl', LINES))
    await store.getState().confirmImport()
    expect(fake.inputs('batches:import')).toEqual([
      { fileName: 'a.jsonl', content: LINES, format: 'jsonl', skipInvalid: false, audit: false },
    ])
    expect(store.getState().importDraft).toBeNull()
    expect(store.getState().lastImport).toEqual({
      fileName: 'a.jsonl',
      batchId: 'b7',
      enqueued: 1,
      skipped: 0,
    })
    expect(fake.inputs('batches:list')).toHaveLength(1)
    expect(fake.inputs('tasks:list')).toHaveLength(1)
  })

  it('keeps the draft with the error when the import is refused, and imports nothing unconfirmable', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:preview', () => ok(preview(1, 1)))
    await store.getState().openImportFile(file('a.jsonl', LINES))
    await store.getState().confirmImport()
    expect(fake.inputs('batches:import')).toEqual([])

    store.getState().setImportOptions({ skipInvalid: true })
    fake.on('batches:import', () => fail('db_locked'))
    await store.getState().confirmImport()
    expect(store.getState().importDraft).toMatchObject({
      phase: 'ready',
      error: { code: 'db_locked' },
    })
    expect(store.getState().lastImport).toBeNull()
  })

  it('closing drops the draft, and a preview still in flight does not bring it back', async () => {
    const { store, fake } = storeOnFakePacer()
    const slow = deferred<Reply<Preview>>()
    fake.on('batches:preview', () => slow.promise)
    const opened = store.getState().openImportFile(file('a.jsonl', LINES))
    await until(() => fake.inputs('batches:preview').length === 1)
    store.getState().closeImport()
    expect(store.getState()).toMatchObject({ importDraft: null, importSeq: 2 })
    slow.resolve(ok(preview(1)))
    await opened
    expect(store.getState().importDraft).toBeNull()
  })
})
