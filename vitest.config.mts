import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Fails the run if any test wrote into the user's own ~/.config/Pacer (or $PACER_DB).
    globalSetup: ['test/helpers/real-config-guard.ts'],
  },
})
