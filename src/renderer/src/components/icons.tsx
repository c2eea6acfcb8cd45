/** Stroke icons drawn inline: no icon font or extra request, and they follow currentColor. */
const paths = {
  queue: 'M4 6h16M4 12h16M4 18h10',
  concurrency: 'M3 17l5-6 4 4 8-10M14 5h6v6',
  spend:
    'M12 3v18M16.5 7.5c0-1.7-2-3-4.5-3s-4.5 1.3-4.5 3 2 2.6 4.5 3 4.5 1.3 4.5 3-2 3-4.5 3-4.5-1.3-4.5-3',
  settings:
    'M12 15a3 3 0 100-6 3 3 0 000 6zM19.4 15l1.6 1-2 3.4-1.8-.7a7 7 0 01-2.2 1.3L14.7 22h-4l-.3-2a7 7 0 01-2.2-1.3l-1.8.7-2-3.4 1.6-1a7 7 0 010-2.6L4.4 11l2-3.4 1.8.7a7 7 0 012.2-1.3l.3-2h4l.3 2a7 7 0 012.2 1.3l1.8-.7 2 3.4-1.6 1a7 7 0 010 2.6z',
  upload: 'M12 16V4M7 9l5-5 5 5M4 20h16',
  plus: 'M12 5v14M5 12h14',
} as const

export type IconName = keyof typeof paths

export function Icon({ name, size = 16 }: { name: IconName; size?: number }) {
  return (
    <svg
      className="icon"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.8}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <path d={paths[name]} />
    </svg>
  )
}
