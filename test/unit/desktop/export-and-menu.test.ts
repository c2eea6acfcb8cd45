import { existsSync, linkSync, readFileSync, symlinkSync } from 'node:fs'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

vi.mock('electron', () => ({}))

import { createDesktopHandlers } from '../../../src/main/desktop/desktop-handlers'
import { openDatabase } from '../../../src/main/engine/db'
import { exportCsvToFile, exportResultsToFile } from '../../../src/main/desktop/export-file'
import {
  buildMenuTemplate,
  exportCsvFromMenu,
  importBatchFromMenu,
  installCommandFromMenu,
  type ImportDialogs,
} from '../../../src/main/desktop/menu'
import { installOnPath } from '../../../src/main/transport/path-install'
import type { ExportCsv } from '../../../src/main/transport/ledger-export'
import { createFakeEngine } from '../../helpers/fake-engine'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pacer-export-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})
/** The database the exports read: none of the files a test writes is it. */
const db = () => join(dir, 'pacer.db')

describe('exportCsvToFile', () => {
  it('streams the export into the chosen file and leaves no partial file', async () => {
    const engine = createFakeEngine()
    const path = join(dir, 'pacer-events-20250101.csv')
    const result = await exportCsvToFile(engine.exportCsv, 'events', { since: 5 }, path, db())
    expect(result).toEqual({ rows: 3 })
    expect(await readFile(path, 'utf8')).toMatch(/^ts,task_type,cost_usd\r\n1000,/)
    expect(await readdir(dir)).toEqual(['pacer-events-20250101.csv'])
    expect(engine.exports).toEqual([{ kind: 'events', filter: { since: 5 } }])
  })

  it('never leaves a truncated CSV under the chosen name when the export fails midway', async () => {
    const path = join(dir, 'out.csv')
    await writeFile(path, 'the previous export\n')
    const failing: ExportCsv = async (_kind, out) => {
      out.write('ts,cost\r\n1,2\r\n')
      throw new Error('database is locked')
    }
    await expect(exportCsvToFile(failing, 'events', {}, path, db())).rejects.toThrow(
      'database is locked',
    )
    expect(await readFile(path, 'utf8')).toBe('the previous export\n')
    expect(await readdir(dir)).toEqual(['out.csv'])
  })

  it('fails with the file system error for a folder that does not exist', async () => {
    const engine = createFakeEngine()
    await expect(
      exportCsvToFile(engine.exportCsv, 'summary', {}, join(dir, 'missing', 'x.csv'), db()),
    ).rejects.toMatchObject({ code: 'ENOENT' })
    expect(engine.exports).toEqual([])
  })
})

describe('the desktop exports, aimed at the database', () => {
  it('refuse the database and its companions, through links too, and write nothing', async () => {
    const engine = createFakeEngine()
    const path = db()
    const database = openDatabase(path)
    database.prepare('CREATE TABLE kept (x)').run()
    database.prepare("INSERT INTO kept VALUES ('the ledger')").run()
    const link = join(dir, 'link.db')
    symlinkSync(path, link)
    const hard = join(dir, 'hard.db')
    linkSync(path, hard)
    const before = readFileSync(path)
    const targets = [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, link, hard]
    for (const target of targets) {
      await expect(exportCsvToFile(engine.exportCsv, 'events', {}, target, path)).rejects.toThrow(
        /would destroy the ledger; choose another file/,
      )
      await expect(
        exportResultsToFile(engine.exportResults, { batchId: 'b1', format: 'jsonl' }, target, path),
      ).rejects.toThrow(/would destroy the ledger/)
    }
    expect(engine.exports).toEqual([])
    expect(readFileSync(path).equals(before)).toBe(true)
    expect(database.prepare('SELECT x FROM kept').pluck().get()).toBe('the ledger')
    expect(existsSync(`${path}-journal`) || existsSync(`${path}.part`)).toBe(false)
    database.close()
  })
})

describe('createDesktopHandlers: ledger:export', () => {
  it('asks for a path with the dated default name, then writes the file there', async () => {
    const engine = createFakeEngine()
    const choose = vi.fn(async () => join(dir, 'chosen.csv'))
    const handlers = createDesktopHandlers(engine.handlers, {
      chooseExportPath: choose,
      exportCsvToFile: (kind, filter, path) =>
        exportCsvToFile(engine.exportCsv, kind, filter, path, db()),
      exportResultsToFile: vi.fn(),
      now: () => new Date(2025, 0, 31, 12),
    })
    const result = await handlers['ledger:export']({ kind: 'summary', batchId: 'b1' })
    expect(choose).toHaveBeenCalledWith('pacer-summary-20250131.csv', 'summary')
    expect(result).toEqual({ path: join(dir, 'chosen.csv'), rows: 3 })
    expect(existsSync(join(dir, 'chosen.csv'))).toBe(true)
    expect(engine.exports).toEqual([{ kind: 'summary', filter: { batchId: 'b1' } }])
  })

  it("the team's ledger: a file name of its own, and the scope handed to the export", async () => {
    const choose = vi.fn(async () => join(dir, 'team.csv'))
    const write = vi.fn(async () => ({ rows: 7 }))
    const handlers = createDesktopHandlers(createFakeEngine().handlers, {
      chooseExportPath: choose,
      exportCsvToFile: write,
      exportResultsToFile: vi.fn(),
      now: () => new Date(2025, 0, 31, 12),
    })
    const result = await handlers['ledger:export']({ kind: 'events', scope: 'team' })
    expect(result).toEqual({ path: join(dir, 'team.csv'), rows: 7 })
    expect(choose).toHaveBeenCalledWith('pacer-team-events-20250131.csv', 'events')
    expect(write).toHaveBeenCalledWith('events', {}, join(dir, 'team.csv'), 'team')
  })

  it('writes nothing when the operator cancels the dialog', async () => {
    const engine = createFakeEngine()
    const write = vi.fn()
    const handlers = createDesktopHandlers(engine.handlers, {
      chooseExportPath: async () => null,
      exportCsvToFile: write,
      exportResultsToFile: write,
    })
    expect(await handlers['ledger:export']({ kind: 'events' })).toEqual({ path: null, rows: 0 })
    expect(write).not.toHaveBeenCalled()
  })

  it('keeps every other handler of the engine as is', () => {
    const engine = createFakeEngine()
    const handlers = createDesktopHandlers(engine.handlers, {
      chooseExportPath: async () => null,
      exportCsvToFile: vi.fn(),
      exportResultsToFile: vi.fn(),
    })
    expect(handlers['tasks:enqueue']).toBe(engine.handlers['tasks:enqueue'])
    expect(handlers['secrets:set']).toBe(engine.handlers['secrets:set'])
  })
})

describe('createDesktopHandlers: results:export', () => {
  it("asks for a path named after the format, then writes the batch's answers there", async () => {
    const engine = createFakeEngine()
    const choose = vi.fn(async () => join(dir, 'answers.jsonl'))
    const handlers = createDesktopHandlers(engine.handlers, {
      chooseExportPath: choose,
      exportCsvToFile: vi.fn(),
      exportResultsToFile: (options, path) =>
        exportResultsToFile(engine.exportResults, options, path, db()),
      now: () => new Date(2025, 0, 31, 12),
    })
    const result = await handlers['results:export']({ batchId: 'b1', format: 'jsonl' })
    expect(choose).toHaveBeenCalledWith('pacer-results-20250131.jsonl', 'results')
    expect(result).toEqual({ path: join(dir, 'answers.jsonl'), rows: 1 })
    expect(readFileSync(join(dir, 'answers.jsonl'), 'utf8')).toBe('{"line":1,"text":"an answer"}\n')
    expect(engine.resultExports).toEqual([{ batchId: 'b1', format: 'jsonl' }])
  })

  it('leaves no file behind when the batch is unknown', async () => {
    const engine = createFakeEngine()
    const path = join(dir, 'none.jsonl')
    await expect(
      exportResultsToFile(
        engine.exportResults,
        { batchId: 'missing', format: 'jsonl' },
        path,
        db(),
      ),
    ).rejects.toMatchObject({ code: 'unknown_batch' })
    expect(existsSync(path) || existsSync(`${path}.part`)).toBe(false)
  })
})

describe('buildMenuTemplate', () => {
  const actions = { importBatch: vi.fn(), exportCsv: vi.fn() }

  function find(
    items: ReturnType<typeof buildMenuTemplate>,
    id: string,
  ): { click?: () => void; role?: string } | undefined {
    for (const item of items) {
      if (item.id === id) return item as { click?: () => void }
      if (Array.isArray(item.submenu)) {
        const hit = find(item.submenu, id)
        if (hit) return hit
      }
    }
    return undefined
  }

  it('has File > Import batch…, Export CSV (events, summary) and Quit, wired to the actions', () => {
    const menu = buildMenuTemplate(actions, { platform: 'linux', isDev: false })
    const file = menu.find((m) => m.label === 'File')!
    const labels = (file.submenu as { label?: string }[]).map((i) => i.label)
    expect(labels).toEqual(['Import batch…', 'Export CSV', undefined, 'Quit'])
    find(menu, 'import-batch')?.click?.()
    find(menu, 'export-events')?.click?.()
    find(menu, 'export-summary')?.click?.()
    expect(actions.importBatch).toHaveBeenCalledTimes(1)
    expect(actions.exportCsv.mock.calls).toEqual([['events'], ['summary']])
    expect(find(menu, 'quit')?.role).toBe('quit')
  })

  it('has an Edit menu (copy and paste) and DevTools only in development', () => {
    const prod = buildMenuTemplate(actions, { platform: 'win32', isDev: false })
    expect(prod.some((m) => m.role === 'editMenu')).toBe(true)
    expect(JSON.stringify(prod)).not.toContain('toggleDevTools')
    const dev = buildMenuTemplate(actions, { platform: 'win32', isDev: true })
    expect(JSON.stringify(dev)).toContain('toggleDevTools')
  })

  it('puts the app menu first on macOS', () => {
    const mac = buildMenuTemplate(actions, { platform: 'darwin', isDev: false, appName: 'Pacer' })
    expect(mac[0]).toMatchObject({ role: 'appMenu', label: 'Pacer' })
  })
})

describe('importBatchFromMenu', () => {
  function dialogs(file: string | null, confirm = true) {
    const said: { kind: string; message: string; detail: string }[] = []
    const d: ImportDialogs = {
      chooseFile: async () => file,
      confirm: async (message, detail) => {
        said.push({ kind: 'confirm', message, detail })
        return confirm
      },
      info: async (message, detail) => void said.push({ kind: 'info', message, detail }),
      error: async (message, detail) => void said.push({ kind: 'error', message, detail }),
    }
    return { d, said }
  }

  function engineWithBatches() {
    const engine = createFakeEngine()
    engine.handlers['batches:preview'] = (input) => {
      engine.calls.push({ channel: 'batches:preview', input })
      return {
        format: 'jsonl',
        valid: 2,
        errors: [{ line: 3, field: 'type', message: 'must be a non-empty string' }],
        forecast: null,
      }
    }
    engine.handlers['batches:import'] = (input) => {
      engine.calls.push({ channel: 'batches:import', input })
      return { batchId: 'b7', enqueued: 2, skipped: 1, errors: [] }
    }
    return engine
  }

  it('previews, confirms with the line errors, then imports skipping the invalid lines', async () => {
    const path = join(dir, 'batch.jsonl')
    await writeFile(path, '{"type":"a","payload":1}\n{"type":"a","payload":2}\n{"type":""}\n')
    const engine = engineWithBatches()
    const { d, said } = dialogs(path)
    await importBatchFromMenu(engine.handlers, d)
    expect(engine.calls.map((c) => c.channel)).toEqual(['batches:preview', 'batches:import'])
    expect(engine.calls[1]?.input).toMatchObject({
      fileName: 'batch.jsonl',
      format: 'jsonl',
      skipInvalid: true,
    })
    expect(said[0]).toMatchObject({
      kind: 'confirm',
      message: 'Import 2 task(s) from batch.jsonl?',
    })
    expect(said[0]?.detail).toContain('line 3 (type): must be a non-empty string')
    expect(said[1]).toMatchObject({ kind: 'info', message: 'Queued 2 task(s)' })
  })

  it('imports nothing when the operator cancels the dialog or the confirmation', async () => {
    const path = join(dir, 'batch.jsonl')
    await writeFile(path, '{}\n')
    const engine = engineWithBatches()
    await importBatchFromMenu(engine.handlers, dialogs(null).d)
    expect(engine.calls).toEqual([])
    await importBatchFromMenu(engine.handlers, dialogs(path, false).d)
    expect(engine.calls.map((c) => c.channel)).toEqual(['batches:preview'])
  })

  it('shows the error when the file cannot be read', async () => {
    const engine = engineWithBatches()
    const { d, said } = dialogs(join(dir, 'gone.csv'))
    await importBatchFromMenu(engine.handlers, d)
    expect(said).toEqual([
      expect.objectContaining({ kind: 'error', message: 'Could not read gone.csv' }),
    ])
    expect(engine.calls).toEqual([])
  })
})

describe('exportCsvFromMenu', () => {
  it('reports the rows written and the file', async () => {
    const engine = createFakeEngine()
    const handlers = createDesktopHandlers(engine.handlers, {
      chooseExportPath: async () => join(dir, 'x.csv'),
      exportCsvToFile: (kind, filter, path) =>
        exportCsvToFile(engine.exportCsv, kind, filter, path, db()),
      exportResultsToFile: vi.fn(),
    })
    const info = vi.fn(async () => undefined)
    await exportCsvFromMenu(handlers, 'events', { info, error: vi.fn() })
    expect(info).toHaveBeenCalledWith('Exported 3 row(s)', join(dir, 'x.csv'))
  })
})

describe("Help > Install 'pacer' command in PATH", () => {
  it('is in the Help menu, wired to the action, and tells what happened', async () => {
    const installCommand = vi.fn()
    const menu = buildMenuTemplate(
      { importBatch: vi.fn(), exportCsv: vi.fn(), installCommand },
      { platform: 'linux', isDev: false },
    )
    const help = menu.find((m) => m.role === 'help')!
    const [item] = help.submenu as { id?: string; label?: string; click?: () => void }[]
    expect(item).toMatchObject({ id: 'install-command', label: "Install 'pacer' command in PATH" })
    item?.click?.()
    expect(installCommand).toHaveBeenCalledTimes(1)

    const said: string[][] = []
    const dialogs = {
      info: async (m: string, d: string) => void said.push(['info', m, d]),
      error: async (m: string, d: string) => void said.push(['error', m, d]),
    }
    const home = await mkdtemp(join(tmpdir(), 'pacer-home-'))
    const install = () =>
      installOnPath({
        platform: 'linux',
        home,
        target: '/opt/Pacer/resources/bin/pacer',
        pathEnv: '',
      })
    await installCommandFromMenu(install, dialogs)
    const link = join(home, '.local', 'bin', 'pacer')
    expect(said[0]?.slice(0, 2)).toEqual(['info', `pacer installed: ${link}`])
    expect(said[0]?.[2]).toContain('is not on your PATH')
    await rm(link)
    await writeFile(link, 'mine')
    await installCommandFromMenu(install, dialogs)
    expect(said[1]?.slice(0, 2)).toEqual(['error', 'pacer was not installed'])
    await rm(home, { recursive: true, force: true })
  })

  it('is absent when the shell offers no installer', () => {
    const menu = buildMenuTemplate(actions(), { platform: 'linux', isDev: false })
    expect(menu.some((m) => m.role === 'help')).toBe(false)
  })
})

function actions() {
  return { importBatch: vi.fn(), exportCsv: vi.fn() }
}
