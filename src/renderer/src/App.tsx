import { useShallow } from 'zustand/react/shallow'
import { Icon, type IconName } from './components/icons'
import { Toasts } from './components/toasts'
import { ConcurrencyView } from './features/concurrency/concurrency-view'
import { QueueView } from './features/queue/queue-view'
import { SettingsView } from './features/settings/settings-view'
import { SpendView } from './features/spend/spend-view'
import { formatUsd } from '../../shared/format'
import { formatInt, formatRollupCost } from './lib/format'
import { selectLiveLoad, useStore, type Store, type View } from './store'
import type { ConnectionState } from './transport'

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
      <ConnectionBanner />
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
  const perPartition = useStore((s) =>
    s.partitions.map((p) => `${p.partition}: ${formatInt(Math.floor(p.limit))}`).join('\n'),
  )
  const totals = useStore((s) => s.ledgerTotals)
  const view = useStore((s) => s.view)
  const stale = useStore(selectDisconnected)
  const title = NAV.find((n) => n.view === view)?.label ?? ''
  return (
    <header className="header">
      <h1>{title}</h1>
      <dl
        className={`header-stats${stale ? ' stale' : ''}`}
        title={stale ? 'From before the connection to the server dropped' : undefined}
      >
        <div className="stat" data-testid="header-inflight">
          <dt>In flight</dt>
          <dd>{formatInt(load.inflight)}</dd>
        </div>
        <div
          className="stat"
          data-testid="header-limit"
          title={load.partitions > 1 ? perPartition : undefined}
        >
          <dt>
            Limit
            {load.only !== null ? (
              <span className="stat-scope mono"> {load.only}</span>
            ) : load.partitions > 1 ? (
              <span className="stat-scope"> (all partitions)</span>
            ) : null}
          </dt>
          <dd>{load.partitions === 0 ? '—' : formatInt(load.limit)}</dd>
        </div>
        <div className="stat" data-testid="header-cost">
          <dt>Cost</dt>
          <dd>
            {totals
              ? formatRollupCost(totals.costMicros, totals.unpricedCalls, totals.estimatedCalls)
              : '—'}
          </dd>
        </div>
        <div className="stat stat-good" data-testid="header-saved">
          <dt>Saved by dedup</dt>
          <dd>{totals ? formatUsd(totals.savedMicros) : '—'}</dd>
        </div>
      </dl>
    </header>
  )
}

/** Over HTTP, whether the event stream is down: everything on screen may be old. */
function selectDisconnected(s: Store): boolean {
  return (
    s.transport === 'http' && (s.connection === 'reconnecting' || s.connection === 'unauthorized')
  )
}

function ConnectionBanner() {
  const connection = useStore((s) => (selectDisconnected(s) ? s.connection : null))
  if (connection === null) return null
  return (
    <div
      className="connection-banner"
      role="alert"
      data-testid="connection-banner"
      data-connection={connection}
    >
      {connection === 'unauthorized' ? (
        <>
          <strong>The server restarted: open the new URL it printed</strong>
          <span>
            This page&apos;s session token is no longer accepted; every start of{' '}
            <code>pacer serve</code> makes a new one.
          </span>
        </>
      ) : (
        <>
          <strong>Disconnected from the Pacer server — retrying…</strong>
          <span>
            What is on screen is from before the connection dropped. If you restarted{' '}
            <code>pacer serve</code> on another port, open the new URL it printed.
          </span>
        </>
      )}
    </div>
  )
}

const HTTP_LABELS: Record<ConnectionState, string> = {
  connecting: 'HTTP (loopback) — connecting…',
  open: 'HTTP (loopback)',
  reconnecting: 'HTTP (loopback) — disconnected',
  unauthorized: 'HTTP (loopback) — session token refused',
}

function Footer() {
  const transport = useStore((s) => s.transport)
  const connection = useStore((s) => s.connection)
  const down = useStore(selectDisconnected)
  const dbPath = useStore((s) => s.settings?.dbPath)
  const on = transport === 'ipc' || (transport === 'http' && connection === 'open')
  return (
    <footer className="footer">
      <span
        data-testid="transport"
        data-connection={transport === 'http' ? connection : transport === 'ipc' ? 'open' : ''}
      >
        <span
          className={`dot${on ? ' dot-on' : down ? ' dot-off' : ''}`}
          aria-hidden="true"
          data-testid="transport-dot"
        />
        {transport === 'ipc'
          ? 'Electron IPC'
          : transport === 'http'
            ? HTTP_LABELS[connection]
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
