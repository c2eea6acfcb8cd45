/** The headless transport, for `pacer serve`: the same contract as the Electron shell, over HTTP. */
export { startHttpServer } from './http-server'
export { isLoopbackHost } from '../../shared/contract'
export type { HttpServerHandle, HttpServerOptions } from './http-server'
export type { EventSubscribe } from '../transport/commands'
export type { ExportCsv, ExportFilter, ExportKind } from '../transport/ledger-export'
