/**
 * The one contract between the engine and the console: every command and event as a zod schema
 * with its inferred type, every view the engine answers with, and the channel names as constants.
 * Both transports (Electron IPC and loopback HTTP + SSE) validate inputs against these schemas on
 * the engine side. The engine's own types are these views (or extend them): one definition each.
 */
export * from './contract/tasks'
export * from './contract/results'
export * from './contract/scheduler'
export * from './contract/spend'
export * from './contract/settings'
export * from './contract/commands'
export * from './contract/events'
