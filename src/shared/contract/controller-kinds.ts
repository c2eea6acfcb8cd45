// The controller kinds as plain data, apart from scheduler.ts (zod): `pacer --help` lists them as
// the choices of --controller without loading zod, and ControllerKind is built from the same tuple.

/** The concurrency controllers a partition can run. */
export const CONTROLLER_KIND_NAMES = ['seed', 'adaptive'] as const
