// The Settings view says where each provider's calls and key go, in real Chromium over
// `pacer serve`: a base URL given to the process carries the environment's key; a URL stored in
// the database without a key is shown refused, in the same line `pacer run` prints.
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/main/engine/app/engine'
import { envSecrets } from '../../src/main/engine/app/secrets'
import { consoleSession } from '../helpers/browser'
import { tempDir } from '../helpers/cli'

const PLANTED = 'http://127.0.0.1:9/v1'
const GIVEN = 'http://127.0.0.1:10/v1'

const s = consoleSession({
  name: 'keys',
  async prepare(db) {
    // A console that held no key stored an openai base URL in the database.
    const planter = createEngine({ dbPath: db, secrets: envSecrets({}) })
    await planter.handlers['settings:set']({ baseUrls: { openai: PLANTED } })
    await planter.shutdown()
    return {
      args: ['--provider', 'anthropic', '--base-url', GIVEN],
      env: {
        OPENAI_API_KEY: 'sk-e2e-openai-0123456789abcdef',
        ANTHROPIC_API_KEY: 'sk-e2e-anthropic-0123456789abcdef',
        OPENAI_BASE_URL: '',
        ANTHROPIC_BASE_URL: '',
      },
    }
  },
})

beforeAll(() => s.page.getByTestId('nav-settings').click())

describe('console keys', () => {
  it('shows the planted URL refused, and the given one carrying the key', async () => {
    const refusal = s.page.getByTestId('key-refusal-openai')
    await refusal.waitFor()
    expect(await refusal.textContent()).toBe(
      `openai: the base URL ${PLANTED} stored in the database was never given a key, so OPENAI_API_KEY from the environment is not sent there; pass --base-url ${PLANTED} (or OPENAI_BASE_URL) with the key, or store the key for that URL in Settings, or clear the base URL in Settings`,
    )
    expect(await s.page.getByTestId('key-route-anthropic').textContent()).toContain(
      `Calls go to ${GIVEN} (given to this process with --base-url`,
    )
    expect(await s.page.getByTestId('key-refusal-anthropic').count()).toBe(0)
    expect(await s.page.getByTestId('key-state-anthropic').textContent()).toBe(
      'from the environment (…cdef)',
    )
    await s.page.screenshot({ path: join(tempDir('pacer-e2e-keys-shot-'), 'refused.png') })
    // The stderr of `pacer serve` said it at start too, as a warning.
    expect(s.served.proc!.output().stderr).toContain(
      `pacer: warning: openai: the base URL ${PLANTED}`,
    )
  })

  it('clearing the planted URL lifts the refusal', async () => {
    const input = s.page.getByTestId('base-url-openai')
    await input.fill('')
    await s.page.getByTestId('provider-openai').getByRole('button', { name: 'Save URL' }).click()
    await s.page.getByTestId('key-refusal-openai').waitFor({ state: 'detached' })
    expect(await s.page.getByTestId('key-route-openai').textContent()).toContain(
      'Calls go to https://api.openai.com/v1 (the provider’s default)',
    )
  })

  it('logged no page errors', () => {
    expect(s.errors).toEqual([])
  })
})
