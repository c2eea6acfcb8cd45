/**
 * The one place where engine events enter the console. Listeners are attached before the first
 * loads so nothing that happens in between is missed; the loads then replace whatever the events
 * brought with a complete picture.
 */
import type { PartitionView, TypeRollupView } from '../../../shared/contract'
import { throttle } from '../lib/timing'
import { connectionState, getPacer, onConnectionChanged } from '../transport'
import { call, pacer, providePacer } from './api'
import { useStore } from './index'
import { pushSamples } from './samples'

/** Header and partition cards: 4 updates a second is live to the eye and cheap to render. */
const PARTITIONS_MS = 250
/** Spend tables re-query the ledger, so they refresh less often than they are told to. */
const SPEND_REFRESH_MS = 2000

export function wirePacer(): () => void {
  providePacer(getPacer)
  const api = pacer()
  const store = useStore.getState
  store().setTransport(api.transport)
  store().setConnection(connectionState())

  const setPartitions = throttle((p: PartitionView[]) => store().setPartitions(p), PARTITIONS_MS)
  const setTotals = throttle((t: TypeRollupView) => store().setLedgerTotals(t), PARTITIONS_MS)
  const refreshSpend = throttle(() => void store().refreshSpend(), SPEND_REFRESH_MS)

  // A bug in one handler must not silently stop the stream of the others: report it and go on.
  const guard =
    <T>(name: string, fn: (payload: T) => void) =>
    (payload: T): void => {
      try {
        fn(payload)
      } catch (err) {
        store().reportError(
          `Could not apply ${name}`,
          err instanceof Error ? err.message : `${err}`,
        )
      }
    }

  const unsubscribers = [
    api.onTasksChanged(guard('task changes', (e) => store().applyTasksChanged(e))),
    api.onSchedulerChanged(
      guard('scheduler changes', (e) => {
        // Samples go to the ring buffers, not the store: the charts pull them per frame.
        pushSamples(e.samples)
        if (e.partitions.length) setPartitions(e.partitions)
        store().addLimitChanges(e.changes)
        store().addPauses(e.pauses)
      }),
    ),
    api.onLedgerChanged(
      guard('ledger changes', (e) => {
        setTotals(e.totals)
        if (store().view === 'spend') refreshSpend()
        else store().markSpendStale()
      }),
    ),
    api.onTeamChanged(
      guard('team mode changes', (teamStore) => {
        const was = store().settings?.teamStore.active ?? null
        store().applyTeamStore(teamStore)
        // Joined: the engine behind the console was reopened in team mode, with a scheduler of
        // its own (and the team's partitions).
        if (teamStore.active !== was) void store().loadScheduler()
      }),
    ),
  ]

  // Back from a dropped stream, everything on screen may be old and the events in between are
  // lost: reload every view's data (the HTTP client also sends a truncated tasks:changed).
  const offConnection = onConnectionChanged((state) => {
    const was = store().connection
    store().setConnection(state)
    // The first open: the batch list may have been read before the stream listened, and a batch
    // another process finished in between would stay 'running' with live controls. Read it again
    // now that every later change reaches this page.
    if (state === 'open' && was === 'connecting') void store().loadBatches()
    if (state !== 'open' || (was !== 'reconnecting' && was !== 'unauthorized')) return
    const s = store()
    void s.loadBatches()
    s.refreshTasks()
    void s.loadScheduler()
    void s.loadSettings()
    void loadAllTimeTotals()
    if (s.view === 'spend') void s.refreshSpend()
    else s.markSpendStale()
  })

  // Coming back to Spend after the ledger moved refreshes it once.
  const unsubscribeView = useStore.subscribe((s, prev) => {
    if (s.view === 'spend' && prev.view !== 'spend' && s.spendStale) void s.refreshSpend()
    // Settings shows the team store's state as of now (gone, back), not as of the start.
    if (s.view === 'settings' && prev.view !== 'settings') void s.loadSettings()
  })

  const s = store()
  void s.loadBatches()
  s.ensureTaskRange(0, 40)
  void s.loadScheduler()
  void s.loadSettings()
  void s.refreshSpend().then(() => {
    // The Spend view opens on a time range; the header wants all-time totals.
    if (store().ledgerTotals === null) void loadAllTimeTotals()
  })

  return () => {
    for (const off of unsubscribers) off()
    offConnection()
    unsubscribeView()
    setPartitions.cancel()
    setTotals.cancel()
    refreshSpend.cancel()
  }
}

async function loadAllTimeTotals(): Promise<void> {
  const reply = await call((api) => api.ledgerRollup({}))
  if (reply.ok) useStore.getState().setLedgerTotals(reply.value.totals)
  else useStore.getState().reportError('Could not load ledger totals', reply.error)
}
