// The engine's one public face: cli/, desktop/ and server/ import only this module (lint holds it).
export { AgentModuleError, fileKind, loadAgentModule } from './agents/module'
export type { AgentModule } from './agents/module'
export type { BatchAgents } from './agents/registry'
export { createEngine } from './app/engine'
export type { Engine, EngineOptions, SecretsAccess, StreamedStart } from './app/engine'
export { HTTP_PROVIDERS } from './app/provider-access'
export { eachEngine, openConsoleEngine } from './app/team-join'
export { EngineError } from './core/errors'
export type { Budgets, BudgetState } from './app/budgets'
export type { AimdParams, Usage } from './core/types'
export { PACER_VERSION } from './core/version'
export { RECOVERY_HINT, defaultDbPath, integrityProblems, openDatabase } from './db'
export { databaseFileAt, describeDatabaseFile } from './db/database-files'
export { CONTROLLER_KINDS } from './pacing/controllers'
export type { ControllerKind } from './pacing/controllers'
export type { PartitionStop } from './pacing/scheduler'
export { PRICE_TABLE_VERSION, Prices } from './pricing/prices'
export type { PriceListing, PriceMatch } from './pricing/prices'
export type { HttpProviderId } from './providers'
export { ENV_NAMES } from './providers/keys'
export { SIM_DEFAULT_MODEL, SIM_REQUESTS_PER_MINUTE } from './providers/sim'
export type { FailureGroup } from './queue/queue'
export { SettingsStore } from './settings/settings'
export { TeamStoreUnreachable } from './team/connect'
export type { TeamStore } from './team/connect'
export { teamCsv, teamRollup } from './team/ledger/team-read'
export { ExportIncomplete } from './ledger/csv'
export {
  aloneLine,
  confirmGivenStore,
  connectTeam,
  teamChoice,
  teamModeLine,
  unconfirmedStoreLine,
} from './team/open'
export type { TeamChoice } from './team/open'
export { StoreUrlError } from './team/store-url'
export { GENAI_SEMCONV_VERSION } from './telemetry/batch-trace'
export { LiveTraceExport, exportBatchTrace } from './telemetry/export'
export type { TraceExportReport } from './telemetry/export'
export { OtlpConfigError, describeTarget, otlpTarget } from './telemetry/otlp-config'
export type { OtlpTarget } from './telemetry/otlp-config'
export { loadOtelSdk } from './telemetry/pipeline'
