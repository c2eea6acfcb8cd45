// Apart from sim.ts so that the CLI can show the default in `pacer --help` without loading a provider.

/** The simulated provider's request budget per rolling minute, unless told otherwise. */
export const SIM_REQUESTS_PER_MINUTE = 10_000
