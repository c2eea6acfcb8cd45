// The engine's constants that load nothing else (no zod, no SQLite): `pacer --help` shows them
// without opening the engine. Everything else goes through index.ts.
export { PACER_VERSION } from './core/version'
export { SIM_REQUESTS_PER_MINUTE } from './providers/sim-limits'
