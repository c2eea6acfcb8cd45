/**
 * The headless transport's routes (loopback HTTP + Server-Sent Events), shared by `pacer serve`
 * and the browser client. Every /api route needs the session's bearer token: in the
 * `Authorization: Bearer` header, or (EventSource and downloads cannot set headers) `?token=`.
 */
export const HTTP_ROUTES = {
  /** POST, JSON body = the command's input, answers a `Reply` as JSON. */
  command: (channel: string) => `/api/commands/${channel}`,
  /** GET, text/event-stream: `event: <EventName>` + `data: <json>`. */
  events: '/api/events',
  /** GET, text/csv download: `?kind=events|summary&since=&until=&batchId=`. */
  export: '/api/export',
  /** GET, a download of a batch's answers: `?batchId=&format=jsonl|csv&raw=1`. */
  results: '/api/results',
} as const

/** The query parameter that carries the token in the URL printed by `pacer serve`. */
export const TOKEN_PARAM = 'token'
