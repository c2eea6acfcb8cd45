// Read at build time too: electron-vite inlines this one field of package.json into the desktop
// bundle, and tsx reads it from the file for the CLI, so both report the same version.
import { version } from '../../../../package.json'

/** This Pacer's version, from package.json. */
export const PACER_VERSION: string = version

/** Sent with every provider call, so a provider's (or a proxy's) logs can tell Pacer's calls apart. */
export const USER_AGENT = `pacer/${PACER_VERSION}`
