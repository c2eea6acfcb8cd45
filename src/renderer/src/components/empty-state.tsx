import type { ReactNode } from 'react'

export function EmptyState({
  title,
  children,
  testId,
}: {
  title: string
  children?: ReactNode
  testId?: string
}) {
  return (
    <div className="empty-state" data-testid={testId}>
      <h3>{title}</h3>
      {children}
    </div>
  )
}
