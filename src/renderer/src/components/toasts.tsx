import { useStore } from '../store'

/** Background errors (event handling, loads nobody clicked for) land here, never in silence. */
export function Toasts() {
  const toasts = useStore((s) => s.toasts)
  const dismiss = useStore((s) => s.dismissToast)
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <div
          key={t.id}
          className={`toast toast-${t.kind}`}
          role={t.kind === 'error' ? 'alert' : 'status'}
          data-testid="toast"
        >
          <div className="toast-body">
            <strong>
              {t.title}
              {t.repeats > 1 ? <span className="toast-repeats"> ×{t.repeats}</span> : null}
            </strong>
            <span>{t.message}</span>
          </div>
          <button
            type="button"
            className="icon-button"
            aria-label="Dismiss"
            onClick={() => dismiss(t.id)}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  )
}
