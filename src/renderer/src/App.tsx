import { useShallow } from 'zustand/react/shallow'
import { Icon, type IconName } from './components/icons'
import { Toasts } from './components/toasts'
import { ConcurrencyView } from './features/concurrency/concurrency-view'
import { QueueView } from './features/queue/queue-view'
import { SettingsView } from './features/settings/settings-view'
import { SpendView } from './features/spend/spend-view'
import { formatInt, formatMicros, formatRollupCost } from './lib/format'
import { selectLiveLoad, useStore, type View } from './store'

const NAV: { view: View; label: string; icon: IconName }[] = [
  { view: 'queue', label: 'Queue', icon: 'queue' },
  { view: 'concurrency', label: 'Concurrency', icon: 'concurrency' },
  { view: 'spend', label: 'Spend', icon: 'spend' },
  { view: 'settings', label: 'Settings', icon: 'settings' },
]

export function App() {
  const view = useStore((s) => s.view)
  return (
    <div className="app">
      <Sidebar />
      <Header />
      <main className="content">
        {view === 'queue' && <QueueView />}
        {view === 'concurrency' && <ConcurrencyView />}
        {view === 'spend' && <SpendView />}
        {view === 'settings' && <SettingsView />}
      </main>
      <Footer />
      <Toasts />
    </div>
  )
}

function Sidebar() {
  const view = useStore((s) => s.view)
  const setView = useStore((s) => s.setView)
  return (
    <nav className="sidebar" aria-label="Views">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        Pacer
      </div>
      {NAV.map((item) => (
        <button
          key={item.view}
          type="button"
          className={`nav-button${view === item.view ? ' active' : ''}`}
          aria-current={view === item.view ? 'page' : undefined}
          data-testid={`nav-${item.view}`}
          onClick={() => setView(item.view)}
        >
          <Icon name={item.icon} />
          {item.label}
        </button>
      ))}
    </nav>
  )
}

function Header() {
  const load = useStore(useShallow(selectLiveLoad))
  const totals = useStore((s) => s.ledgerTotals)
  const view = useStore((s) => s.view)
  const title = NAV.find((n) => n.view === view)?.label ?? ''
  return (
    <header className="header">
      <h1>{title}</h1>
      <dl className="header-stats">
        <div className="stat" data-testid="header-inflight">
          <dt>In flight</dt>
          <dd>{formatInt(load.inflight)}</dd>
        </div>
        <div className="stat" data-testid="header-limit">
          <dt>Limit</dt>
          <dd>{formatInt(load.limit)}</dd>
        </div>
        <div className="stat" data-testid="header-cost">
          <dt>Cost</dt>
          <dd>{totals ? formatRollupCost(totals.costMicros, totals.unpricedCalls) : '—'}</dd>
        </div>
        <div className="stat stat-good" data-testid="header-saved">
          <dt>Saved by dedup</dt>
          <dd>{totals ? formatMicros(totals.savedMicros) : '—'}</dd>
        </div>
      </dl>
    </header>
  )
}

function Footer() {
  const transport = useStore((s) => s.transport)
  const dbPath = useStore((s) => s.settings?.dbPath)
  return (
    <footer className="footer">
      <span data-testid="transport">
        <span className={`dot${transport ? ' dot-on' : ''}`} aria-hidden="true" />
        {transport === 'ipc'
          ? 'Electron IPC'
          : transport === 'http'
            ? 'HTTP (loopback)'
            : 'Connecting…'}
      </span>
      {dbPath ? (
        <span className="footer-path" title={dbPath}>
          {dbPath}
        </span>
      ) : null}
    </footer>
  )
}
