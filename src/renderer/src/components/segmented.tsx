/** A row of buttons of which one is chosen (a time range, whose ledger). */
export function Segmented<Id extends string>({
  options,
  value,
  onChange,
  label,
  testId,
  optionTestId,
}: {
  options: readonly { id: Id; label: string }[]
  value: Id
  onChange: (id: Id) => void
  label: string
  testId: string
  /** Each button's test id, from its option's id. */
  optionTestId: (id: Id) => string
}) {
  return (
    <div className="segmented" role="group" aria-label={label} data-testid={testId}>
      {options.map((o) => (
        <button
          key={o.id}
          type="button"
          className={o.id === value ? 'active' : ''}
          aria-pressed={o.id === value}
          onClick={() => onChange(o.id)}
          data-testid={optionTestId(o.id)}
        >
          {o.label}
        </button>
      ))}
    </div>
  )
}
