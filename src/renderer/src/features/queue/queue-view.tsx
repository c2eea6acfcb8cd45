import { useRef, useState, type DragEvent } from 'react'
import { EmptyState } from '../../components/empty-state'
import { Icon } from '../../components/icons'
import { BATCH_FILE_ACCEPT } from '../../../../shared/batch-format'
import { formatInt } from '../../lib/format'
import { useStore } from '../../store'
import { AddTaskForm } from './add-task-form'
import { BatchList } from './batch-list'
import { ImportPreview } from './import-preview'
import { TaskDetail } from './task-detail'
import { TaskTable } from './task-table'

export function QueueView() {
  const openImportFile = useStore((s) => s.openImportFile)
  const hasBatches = useStore((s) => s.batches.length > 0)
  const batchesLoaded = useStore((s) => s.batchesLoaded)
  const drafting = useStore((s) => s.importDraft !== null)
  const openTaskId = useStore((s) => s.openTaskId)
  const dbPath = useStore((s) => s.settings?.dbPath)
  const [adding, setAdding] = useState(false)
  const [dragging, setDragging] = useState(false)
  // dragenter/dragleave fire for every child crossed; count them to know when the file left.
  const dragDepth = useRef(0)
  const fileInput = useRef<HTMLInputElement>(null)

  const hasFiles = (e: DragEvent): boolean => e.dataTransfer.types.includes('Files')
  const onDragEnter = (e: DragEvent): void => {
    if (!hasFiles(e)) return
    e.preventDefault()
    dragDepth.current++
    setDragging(true)
  }
  const onDragOver = (e: DragEvent): void => {
    if (!hasFiles(e)) return
    e.preventDefault()
    e.dataTransfer.dropEffect = 'copy'
  }
  const onDragLeave = (e: DragEvent): void => {
    if (!hasFiles(e)) return
    dragDepth.current = Math.max(0, dragDepth.current - 1)
    if (dragDepth.current === 0) setDragging(false)
  }
  const onDrop = (e: DragEvent): void => {
    if (!hasFiles(e)) return
    e.preventDefault()
    dragDepth.current = 0
    setDragging(false)
    const file = e.dataTransfer.files[0]
    if (file) void openImportFile(file)
  }

  const empty = batchesLoaded && !hasBatches && !drafting
  const detailOpen = hasBatches && openTaskId !== null

  return (
    <div
      className={`view queue-view${detailOpen ? ' with-detail' : ''}`}
      onDragEnter={onDragEnter}
      onDragOver={onDragOver}
      onDragLeave={onDragLeave}
      onDrop={onDrop}
      data-testid="queue-view"
    >
      <div className="toolbar">
        <button
          type="button"
          className="button primary"
          onClick={() => fileInput.current?.click()}
          data-testid="import-button"
        >
          <Icon name="upload" /> Import batch…
        </button>
        <input
          ref={fileInput}
          type="file"
          accept={BATCH_FILE_ACCEPT}
          className="visually-hidden"
          data-testid="import-file"
          onChange={(e) => {
            const file = e.target.files?.[0]
            // Reset so choosing the same file again (after fixing it) fires change again.
            e.target.value = ''
            if (file) void openImportFile(file)
          }}
        />
        <button
          type="button"
          className={`button${adding ? ' active' : ''}`}
          onClick={() => setAdding((a) => !a)}
          data-testid="add-task-toggle"
        >
          <Icon name="plus" /> Add task
        </button>
        <span className="hint">or drop a .jsonl / .csv batch file anywhere here</span>
      </div>

      <LastImport />
      <ImportPreview />
      {adding ? <AddTaskForm onClose={() => setAdding(false)} /> : null}

      {empty ? (
        <EmptyState title="Nothing queued yet" testId="queue-empty">
          <p>
            Import a <code>.jsonl</code> batch file or add a task; try{' '}
            <code>resources/examples/demo.jsonl</code>.
          </p>
          {dbPath ? (
            <p data-testid="queue-empty-cli">
              Or from a terminal, on this same database (its batches appear here as they run):{' '}
              <code>npx pacer run FILE.jsonl --db {dbPath}</code>, or{' '}
              <code>npx pacer demo --db {dbPath}</code> for the bundled example.
            </p>
          ) : null}
          <p className="muted">
            Each line is one task:{' '}
            <code>{'{"type": "summarize", "payload": {…}, "steps": 5}'}</code>. Identical tasks run
            once; the rest reuse the result. The built-in <code>sim</code> provider needs no API
            key.
          </p>
        </EmptyState>
      ) : null}
      {/* Empty batch and task panels under a first preview would only be noise. */}
      {hasBatches ? (
        <>
          <BatchList />
          <TaskTable />
          <TaskDetail />
        </>
      ) : null}

      {dragging ? (
        <div className="drop-overlay" aria-hidden="true">
          <div>
            <Icon name="upload" size={32} />
            <p>Drop a .jsonl or .csv batch file to preview it</p>
          </div>
        </div>
      ) : null}
    </div>
  )
}

function LastImport() {
  const last = useStore((s) => s.lastImport)
  const setBatchFilter = useStore((s) => s.setBatchFilter)
  if (!last) return null
  return (
    <div className="banner banner-good" data-testid="import-result">
      Queued {formatInt(last.enqueued)} task{last.enqueued === 1 ? '' : 's'} from{' '}
      <span className="mono">{last.fileName}</span>
      {last.skipped ? `, skipped ${formatInt(last.skipped)} invalid line(s)` : ''}.
      {last.batchId ? (
        <button type="button" className="link" onClick={() => setBatchFilter(last.batchId)}>
          Show its tasks
        </button>
      ) : null}
    </div>
  )
}
