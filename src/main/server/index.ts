/** The headless transport, for `pacer serve`: the same contract as the Electron shell, over HTTP. */
export { startHttpServer } from './http-server'
export { isLoopbackHost } from '../../shared/contract'
