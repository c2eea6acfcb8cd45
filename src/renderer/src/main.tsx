import { Component, StrictMode, type ErrorInfo, type ReactNode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App'
import { wirePacer } from './store/wire'
import './styles.css'

/** A render bug shows what broke instead of a blank window. */
class CrashScreen extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null }
  static getDerivedStateFromError(error: Error): { error: Error } {
    return { error }
  }
  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error('[pacer] render failed', error, info.componentStack)
  }
  override render(): ReactNode {
    if (!this.state.error) return this.props.children
    return (
      <div className="fatal" role="alert">
        <h1>The console hit an error</h1>
        <pre>{this.state.error.message}</pre>
        <button type="button" className="button" onClick={() => location.reload()}>
          Reload
        </button>
      </div>
    )
  }
}

const root = createRoot(document.getElementById('root')!)

try {
  wirePacer()
  root.render(
    <StrictMode>
      <CrashScreen>
        <App />
      </CrashScreen>
    </StrictMode>,
  )
} catch (err) {
  // No transport at all (no preload, no server URL): say so instead of an empty window.
  root.render(
    <div className="fatal" role="alert">
      <h1>Cannot reach the Pacer engine</h1>
      <pre>{err instanceof Error ? err.message : String(err)}</pre>
      <p>
        Open the console from the desktop app, or from the URL printed by <code>pacer serve</code>.
      </p>
    </div>,
  )
}
