import { useEffect, useState } from 'react'

/**
 * Puts `text` on the clipboard. The async Clipboard API needs a secure context (loopback HTTP and
 * the desktop app are one); the hidden-textarea copy is the fallback a page without it has.
 */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const area = document.createElement('textarea')
    area.value = text
    area.setAttribute('readonly', '')
    area.style.position = 'fixed'
    area.style.opacity = '0'
    document.body.appendChild(area)
    area.select()
    try {
      return document.execCommand('copy')
    } finally {
      area.remove()
    }
  }
}

/** A small "Copy" button that says "Copied" (or that it could not) for a moment after a click. */
export function CopyButton({
  text,
  label = 'Copy',
  testId,
}: {
  text: string
  label?: string
  testId?: string
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle')
  useEffect(() => {
    if (state === 'idle') return
    const timer = setTimeout(() => setState('idle'), 1500)
    return () => clearTimeout(timer)
  }, [state])
  return (
    <button
      type="button"
      className="button small copy-button"
      data-testid={testId}
      data-state={state}
      onClick={() => void copyText(text).then((ok) => setState(ok ? 'copied' : 'failed'))}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label}
    </button>
  )
}
