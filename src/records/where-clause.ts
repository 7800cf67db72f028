/** A WHERE clause built from optional filters: each value given adds its condition and becomes the next `$n`. */
export class WhereClause {
  readonly values: unknown[] = [];
  private readonly conditions: string[] = [];

  /** Adds `clause($n)` with `value`, unless the value is undefined (that filter is not asked for). */
  add(clause: (placeholder: string) => string, value: unknown): this {
    if (value === undefined) return this;
    this.values.push(value);
    this.conditions.push(clause(`$${this.values.length}`));
    return this;
  }

  /** Adds a condition without a value. */
  addRaw(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** `WHERE …`, or nothing when no filter was given. */
  get sql(): string {
    return this.conditions.length > 0 ? `WHERE ${this.conditions.join(' AND ')}` : '';
  }
}
