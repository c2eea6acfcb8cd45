import { EventEmitter } from 'node:events'
import { describe, expect, it, vi } from 'vitest'

// The shell must be testable without an Electron binary: nothing here may load the real module.
vi.mock('electron', () => ({}))

import {
  decideNavigation,
  guardNavigation,
  isSafeExternalUrl,
  openExternalSafely,
  type NavigableContentsLike,
} from '../../../src/main/desktop/external-links'

describe('isSafeExternalUrl', () => {
  it.each([
    // allowed: plain https links
    ['https://example.com', true],
    ['https://example.com/', true],
    ['https://platform.openai.com/docs/models', true],
    ['https://docs.anthropic.com/en/api/rate-limits#response-headers', true],
    ['https://example.com:8443/path?q=1&r=2', true],
    ['HTTPS://EXAMPLE.COM/Upper', true],
    ['https://127.0.0.1/', true],
    ['https://[::1]:8443/', true],
    ['https://bücher.example/', true],
    // refused: other schemes
    ['http://example.com', false],
    ['http://localhost:11434/', false],
    ['http://127.0.0.1:8080/', false],
    ['javascript:alert(1)', false],
    ['JaVaScRiPt:alert(1)', false],
    ['data:text/html,<script>alert(1)</script>', false],
    ['file:///etc/passwd', false],
    ['file://server/share/x.exe', false],
    ['ftp://example.com/file', false],
    ['mailto:ops@example.com', false],
    ['smb://attacker.example/share', false],
    ['ms-msdt:/id PCWDiagnostic', false],
    ['vscode://file/etc/passwd', false],
    ['blob:https://example.com/uuid', false],
    ['about:blank', false],
    // refused: credentials
    ['https://user:pass@example.com/', false],
    ['https://bank.example@evil.example/', false],
    ['https://:token@example.com/', false],
    // refused: malformed or parser-quirk forms
    ['', false],
    ['https://', false],
    ['https:///path', false],
    ['https:example.com', false],
    ['https:\\\\example.com', false],
    ['https://example.com\\@evil.example', false],
    [' https://example.com', false],
    ['https://example.com/ has space', false],
    ['https://exa\tmple.com', false],
    ['https://example.com/\u0000', false],
    ['https://example.com/\n', false],
    ['//example.com', false],
    ['example.com', false],
    ['https://exa mple.com', false],
    [`https://example.com/${'a'.repeat(2100)}`, false],
  ])('%j -> %s', (url, expected) => {
    expect(isSafeExternalUrl(url)).toBe(expected)
  })

  it.each([null, undefined, 42, {}, ['https://example.com'], new URL('https://example.com')])(
    'refuses the non-string %j',
    (value) => {
      expect(isSafeExternalUrl(value)).toBe(false)
    },
  )
})

describe('openExternalSafely', () => {
  it('hands the OS the normalized URL of a safe link', async () => {
    const shell = { openExternal: vi.fn(async () => undefined) }
    await expect(openExternalSafely(shell, 'HTTPS://Example.COM/a/../b')).resolves.toBe(true)
    expect(shell.openExternal).toHaveBeenCalledWith('https://example.com/b')
  })

  it('never calls the OS for an unsafe URL', async () => {
    const shell = { openExternal: vi.fn(async () => undefined) }
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'http://example.com']) {
      await expect(openExternalSafely(shell, url)).resolves.toBe(false)
    }
    expect(shell.openExternal).not.toHaveBeenCalled()
  })

  it('answers false when the OS refuses', async () => {
    const shell = {
      openExternal: vi.fn(async () => {
        throw new Error('no handler')
      }),
    }
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    await expect(openExternalSafely(shell, 'https://example.com')).resolves.toBe(false)
    error.mockRestore()
  })
})

const APP = 'file:///opt/pacer/out/renderer/index.html'
const isAppUrl = (url: string) => url.startsWith('file:///opt/pacer/out/renderer/')

describe('decideNavigation', () => {
  it.each([
    [APP, 'allow'],
    [`${APP}#/spend`, 'allow'],
    ['https://docs.example.com/', 'open-external'],
    ['file:///etc/passwd', 'deny'],
    ['file:///home/op/batch.jsonl', 'deny'],
    ['http://evil.example/', 'deny'],
    ['javascript:alert(1)', 'deny'],
  ])('%s -> %s', (url, expected) => {
    expect(decideNavigation(url, isAppUrl)).toBe(expected)
  })
})

class FakeContents extends EventEmitter {
  openHandler: ((details: { url: string }) => { action: 'deny' }) | null = null
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }) {
    this.openHandler = handler
  }
  /** Fires a navigation event the way Electron 45 does; returns whether it was cancelled. */
  navigate(kind: 'will-navigate' | 'will-redirect', url: string): boolean {
    let prevented = false
    this.emit(kind, { url, preventDefault: () => (prevented = true) }, url)
    return prevented
  }
}

function guarded() {
  const contents = new FakeContents()
  const shell = { openExternal: vi.fn(async () => undefined) }
  guardNavigation(contents as unknown as NavigableContentsLike, { isAppUrl, shell })
  return { contents, shell }
}

const SENTINEL = 'https://example.com/sentinel'

/**
 * Navigates to a safe page after the events under test and waits until it is opened: navigations
 * are handled in order, so anything the earlier ones opened would be there before it.
 */
async function openedOnlyTheSentinel(
  contents: FakeContents,
  shell: { openExternal: ReturnType<typeof vi.fn> },
): Promise<void> {
  expect(contents.navigate('will-navigate', SENTINEL)).toBe(true)
  await vi.waitFor(() => expect(shell.openExternal).toHaveBeenCalledWith(SENTINEL))
  expect(shell.openExternal.mock.calls).toEqual([[SENTINEL]])
}

describe('guardNavigation', () => {
  it('lets the console reload itself', () => {
    const { contents, shell } = guarded()
    expect(contents.navigate('will-navigate', APP)).toBe(false)
    expect(shell.openExternal).not.toHaveBeenCalled()
  })

  it('blocks navigating the window to a web page and opens it in the OS browser instead', async () => {
    const { contents, shell } = guarded()
    expect(contents.navigate('will-navigate', 'https://example.com/docs')).toBe(true)
    await vi.waitFor(() =>
      expect(shell.openExternal).toHaveBeenCalledWith('https://example.com/docs'),
    )
  })

  it.each(['file:///etc/passwd', 'http://evil.example/', 'data:text/html,hi', 'smb://x/y'])(
    'blocks navigating to %s and opens nothing',
    async (url) => {
      const { contents, shell } = guarded()
      expect(contents.navigate('will-navigate', url)).toBe(true)
      await openedOnlyTheSentinel(contents, shell)
    },
  )

  it('cancels redirects away from the console without opening them', async () => {
    const { contents, shell } = guarded()
    expect(contents.navigate('will-redirect', 'https://example.com/')).toBe(true)
    expect(contents.navigate('will-redirect', APP)).toBe(false)
    await openedOnlyTheSentinel(contents, shell)
  })

  it('denies every new window; a safe link opens in the OS browser', async () => {
    const { contents, shell } = guarded()
    expect(contents.openHandler?.({ url: 'https://example.com/' })).toEqual({ action: 'deny' })
    expect(contents.openHandler?.({ url: 'file:///etc/passwd' })).toEqual({ action: 'deny' })
    expect(contents.openHandler?.({ url: APP })).toEqual({ action: 'deny' })
    await vi.waitFor(() => expect(shell.openExternal).toHaveBeenCalledTimes(1))
    expect(shell.openExternal).toHaveBeenCalledWith('https://example.com/')
  })

  it('refuses to attach a <webview>', () => {
    const { contents } = guarded()
    let prevented = false
    contents.emit('will-attach-webview', { preventDefault: () => (prevented = true) })
    expect(prevented).toBe(true)
  })
})
