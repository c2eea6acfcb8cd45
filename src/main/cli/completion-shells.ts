// The shells `pacer completion` writes for, apart from completion.ts so that defining the command
// (index.ts) does not load the generator.

/** The shells `pacer completion SHELL` has a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const

export type Shell = (typeof SHELLS)[number]
