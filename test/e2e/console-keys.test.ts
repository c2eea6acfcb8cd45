// The Settings view says where each provider's calls and key go, in real Chromium over
// `pacer serve`: a base URL given to the process carries the environment's key; a URL stored in
// the database without a key is shown refused, in the same line `pacer run` prints.
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine, envSecrets } from '../../src/main/engine/engine'
import {
  closeConsole,
  ensureConsoleBuilt,
  launchChromium,
  openConsolePage,
  serveConsole,
  type ServedConsole,
} from '../helpers/browser'
import { tempDir } from '../helpers/cli'

const PLANTED = 'http://127.0.0.1:9/v1'
const GIVEN = 'http://127.0.0.1:10/v1'
let server: ServedConsole['proc'] | undefined
let browser: Browser | undefined
let page: Page
const errors: string[] = []

beforeAll(async () => {
  ensureConsoleBuilt()
  const db = join(tempDir('pacer-e2e-keys-'), 'pacer.db')
  // A console that held no key stored an openai base URL in the database.
  const planter = createEngine({ dbPath: db, secrets: envSecrets({}) })
  await planter.handlers['settings:set']({ baseUrls: { openai: PLANTED } })
  await planter.shutdown()
  const served = await serveConsole(db, ['--provider', 'anthropic', '--base-url', GIVEN], {
    OPENAI_API_KEY: 'sk-e2e-openai-0123456789abcdef',
    ANTHROPIC_API_KEY: 'sk-e2e-anthropic-0123456789abcdef',
    OPENAI_BASE_URL: '',
    ANTHROPIC_BASE_URL: '',
  })
  server = served.proc
  browser = await launchChromium()
  page = await openConsolePage(browser, served.url, errors)
  await page.getByTestId('nav-settings').click()
}, 120_000)

afterAll(() => closeConsole(browser, server))

describe('console keys', () => {
  it('shows the planted URL refused, and the given one carrying the key', async () => {
    const refusal = page.getByTestId('key-refusal-openai')
    await refusal.waitFor()
    expect(await refusal.textContent()).toBe(
      `openai: the base URL ${PLANTED} stored in the database was never given a key, so OPENAI_API_KEY from the environment is not sent there; pass --base-url ${PLANTED} (or OPENAI_BASE_URL) with the key, or store the key for that URL in Settings, or clear the base URL in Settings`,
    )
    expect(await page.getByTestId('key-route-anthropic').textContent()).toContain(
      `Calls go to ${GIVEN} (given to this process with --base-url`,
    )
    expect(await page.getByTestId('key-refusal-anthropic').count()).toBe(0)
    expect(await page.getByTestId('key-state-anthropic').textContent()).toBe(
      'from the environment (…cdef)',
    )
    await page.screenshot({ path: join(tempDir('pacer-e2e-keys-shot-'), 'refused.png') })
    // The stderr of `pacer serve` said it at start too, as a warning.
    expect(server!.output().stderr).toContain(`pacer: warning: openai: the base URL ${PLANTED}`)
  })

  it('clearing the planted URL lifts the refusal', async () => {
    const input = page.getByTestId('base-url-openai')
    await input.fill('')
    await page.getByTestId('provider-openai').getByRole('button', { name: 'Save URL' }).click()
    await page.getByTestId('key-refusal-openai').waitFor({ state: 'detached' })
    expect(await page.getByTestId('key-route-openai').textContent()).toContain(
      'Calls go to https://api.openai.com/v1 (the provider’s default)',
    )
  })

  it('logged no page errors', () => {
    expect(errors).toEqual([])
  })
})
