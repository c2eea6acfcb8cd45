// What the batch path tells the rest of the engine through an ordinary HTTP answer: the runner
// prices a call carrying VIA_HEADER at the batch rate; a server without batch endpoints answers
// with BATCH_API_UNSUPPORTED, which stops the partition with one line (setup-failures.ts).

/** Set to VIA_BATCH on every answer that came through a provider batch. */
export const VIA_HEADER = 'x-pacer-via'
export const VIA_BATCH = 'batch'
/** The vendor's batch id an answer came from. */
export const BATCH_ID_HEADER = 'x-pacer-batch'
/** The error code of a server that answered 404 on its batch endpoints. */
export const BATCH_API_UNSUPPORTED = 'batch_api_unsupported'
