// A task's log lines (migration 9's task_log): an agent's ctx.log, a replay that diverged from the
// journal, a call whose first answer was lost. Bounded per task, stored as plain one-line-safe text
// (no terminal escapes, no control characters), shown with the task in the console.
import type Database from 'better-sqlite3'
import type { TaskLogKind } from '../../../../shared/contract'
import { directWrites, type WriteScope } from '../../db/step-writes'

const LOG_KINDS: Readonly<Record<TaskLogKind, number>> = Object.freeze({
  log: 0,
  divergence: 1,
  lost: 2,
  step: 3,
})
const KIND_NAMES = Object.keys(LOG_KINDS) as TaskLogKind[]

/** Lines kept per task, all its executions together; the last one says the rest was dropped. */
export const MAX_LOG_LINES = 200
/** Characters kept of one line. */
const MAX_LOG_CHARS = 2000

export const TASK_LOG_SQL = {
  last: 'SELECT COALESCE(MAX(seq), 0) FROM task_log WHERE task_id = ?',
  append: 'INSERT INTO task_log (task_id, seq, ts, kind, message) VALUES (?, ?, ?, ?, ?)',
  lines: 'SELECT seq, ts, kind, message FROM task_log WHERE task_id = ? ORDER BY seq',
} as const

// CSI/OSC escape sequences first (so their parameters go too), then every other control character
// but tab and newline.
const ESCAPES =
  // eslint-disable-next-line no-control-regex
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)?|\u009b[0-?]*[ -/]*[@-~]/g
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g

/** The line as stored: no escape sequence or control character, at most MAX_LOG_CHARS. */
function cleanLogLine(message: unknown): string {
  const text = typeof message === 'string' ? message : String(message)
  const clean = text.replace(ESCAPES, '').replace(CONTROLS, '')
  return clean.length > MAX_LOG_CHARS ? `${clean.slice(0, MAX_LOG_CHARS - 1)}…` : clean
}

export interface TaskLogLine {
  seq: number
  ts: number
  kind: TaskLogKind
  message: string
}

/** Appends and reads task logs through the runner's write scope. */
export class TaskLog {
  readonly #writes: WriteScope
  readonly #last: Database.Statement<[number], number>
  readonly #append: Database.Statement
  readonly #lines: Database.Statement<
    [number],
    { seq: number; ts: number; kind: number; message: string }
  >

  constructor(db: Database.Database, writes: WriteScope = directWrites) {
    this.#writes = writes
    this.#last = db.prepare<[number], number>(TASK_LOG_SQL.last).pluck()
    this.#append = db.prepare(TASK_LOG_SQL.append)
    this.#lines = db.prepare(TASK_LOG_SQL.lines)
  }

  /** Adds a line; past MAX_LOG_LINES the task's later lines are dropped (the last one says so). */
  append(taskId: number, ts: number, kind: TaskLogKind, message: unknown): void {
    this.#writes.run(() => {
      const last = this.#last.get(taskId) ?? 0
      if (last >= MAX_LOG_LINES) return
      const text =
        last === MAX_LOG_LINES - 1
          ? `log limit of ${MAX_LOG_LINES} lines reached: later lines are not kept`
          : cleanLogLine(message)
      this.#append.run(taskId, last + 1, ts, LOG_KINDS[kind], text)
    })
  }

  lines(taskId: number): TaskLogLine[] {
    return this.#lines.all(taskId).map((l) => ({
      seq: l.seq,
      ts: l.ts,
      kind: KIND_NAMES[l.kind] ?? 'log',
      message: l.message,
    }))
  }
}
