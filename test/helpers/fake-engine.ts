/**
 * A small stand-in for the engine, for transport tests: the transports' job is validation, auth,
 * framing and error mapping, which these few handlers exercise. The engine's own behaviour is
 * tested against the real engine elsewhere.
 */
import { EventEmitter } from 'node:events'
import {
  COMMANDS,
  type CommandHandlers,
  type EventName,
  type EventPayloads,
} from '../../src/shared/contract'
import { EngineError } from '../../src/main/engine/core/errors'
import type { ExportFilter, ExportKind } from '../../src/main/transport/ledger-export'
import type { ExportResults } from '../../src/main/transport/results-export'

export interface FakeEngine {
  handlers: CommandHandlers
  subscribe(event: EventName, listener: (payload: unknown) => void): () => void
  emit<E extends EventName>(event: E, payload: EventPayloads[E]): void
  listenerCount(): number
  exportCsv(
    kind: ExportKind,
    out: NodeJS.WritableStream,
    filter: ExportFilter,
  ): Promise<{ rows: number }>
  exportResults: ExportResults
  exports: { kind: ExportKind; filter: ExportFilter }[]
  resultExports: Parameters<ExportResults>[1][]
  calls: { channel: string; input: unknown }[]
}

export function createFakeEngine(): FakeEngine {
  const emitter = new EventEmitter()
  const calls: FakeEngine['calls'] = []
  const exports: FakeEngine['exports'] = []
  const resultExports: FakeEngine['resultExports'] = []
  const handlers = Object.fromEntries(
    COMMANDS.map((channel) => [
      channel,
      (input: unknown) => {
        calls.push({ channel, input })
        throw new EngineError('not_implemented', `${channel} is not part of this fake`)
      },
    ]),
  ) as unknown as CommandHandlers

  handlers['tasks:enqueue'] = (input) => {
    calls.push({ channel: 'tasks:enqueue', input })
    return { batchId: 'batch-1', enqueued: input.tasks.length }
  }
  handlers['batches:list'] = () => []
  handlers['batches:pause'] = (input) => {
    throw new EngineError('batch_not_found', `no batch ${input.batchId}`, 'batchId')
  }
  handlers['scheduler:get'] = () => {
    // An unexpected failure: the transport must not leak this stack.
    throw new Error('database is on fire')
  }

  return {
    handlers,
    calls,
    exports,
    resultExports,
    subscribe(event, listener) {
      emitter.on(event, listener)
      return () => emitter.off(event, listener)
    },
    emit(event, payload) {
      emitter.emit(event, payload)
    },
    listenerCount() {
      return emitter.eventNames().reduce((n, name) => n + emitter.listenerCount(name), 0)
    },
    async exportCsv(kind, out, filter) {
      exports.push({ kind, filter })
      out.write('ts,task_type,cost_usd\r\n')
      const rows = 3
      for (let i = 0; i < rows; i++) out.write(`${1000 + i},summarize,0.00${i}\r\n`)
      return { rows }
    },
    async exportResults(out, options) {
      if (options.batchId === 'missing') {
        throw new EngineError('unknown_batch', 'no batch missing', 'batchId')
      }
      resultExports.push(options)
      out.write('{"line":1,"text":"an answer"}\n')
      out.end()
      return { rows: 1 }
    },
  }
}
