// Team mode's flags, apart from team.ts: `pacer --help` builds every command's options and must not
// load the engine to do it.
import { Option } from 'commander'

/** `--store` on the commands that run tasks. */
export const storeOption = () =>
  new Option(
    '--store <url>',
    'team mode: share the provider budget and the claims with other machines through this Redis (redis://HOST:PORT/DB, rediss:// for TLS; password in the URL or $PACER_REDIS_PASSWORD; default $PACER_STORE)',
  )

/** `--store [url]` on the commands that read the team's ledger. */
export const teamLedgerOption = () =>
  new Option(
    '--store [url]',
    "the team's ledger, from this Redis (redis://HOST:PORT/DB; without a URL: $PACER_STORE, else the teamStore setting if confirmed)",
  )
