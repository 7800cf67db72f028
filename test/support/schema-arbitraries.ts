import fc from 'fast-check';

// fast-check arbitraries read off a JSON Schema (the subset the OpenAPI document uses): values it calls valid, and
// values that break one of its keywords. Neither is trusted on its own: the contract test keeps only what an
// independent validator (ajv) agrees with.

/** A JSON Schema of the document. */
export type Schema = Record<string, unknown>;

/** Finds the schema a `$ref` (`#/components/schemas/…`) names. */
export type Resolve = (ref: string) => Schema;

const LONGEST_GENERATED = 300;

/** Values the schema calls valid (mostly: the caller filters with a validator). */
export function validValue(schema: Schema, resolve: Resolve): fc.Arbitrary<unknown> {
  const s = deref(schema, resolve);
  if (Array.isArray(s.oneOf) || Array.isArray(s.anyOf)) {
    const branches = (s.oneOf ?? s.anyOf) as Schema[];
    return fc.oneof(...branches.map((branch) => validValue(branch, resolve)));
  }
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  switch (s.type) {
    case 'string':
      return validString(s);
    case 'integer':
      return fc.integer({ min: lowest(s, 1, -1000), max: highest(s, 1, 1_000_000) });
    case 'number':
      return validNumber(s);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const item = validValue((s.items as Schema | undefined) ?? {}, resolve);
      const minLength = Number(s.minItems ?? 0);
      return fc.array(item, { minLength, maxLength: Math.min(Number(s.maxItems ?? 3), minLength + 3) });
    }
    case 'object':
      return validObject(s, resolve);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values breaking the schema (each arbitrary breaks one keyword at one place); the caller filters with a validator. */
export function invalidValues(schema: Schema, resolve: Resolve): fc.Arbitrary<unknown>[] {
  const s = deref(schema, resolve);
  if (Array.isArray(s.oneOf)) return (s.oneOf as Schema[]).flatMap((branch) => invalidValues(branch, resolve));
  const wrongType = s.type === 'string' ? fc.constantFrom(12, true, null, {}) : fc.constantFrom('12', 'x', [], null);
  const broken: fc.Arbitrary<unknown>[] = [wrongType];
  if ('const' in s || Array.isArray(s.enum)) broken.push(fc.string({ maxLength: 20 }));
  if (s.type === 'string') broken.push(...invalidStrings(s));
  if (s.type === 'integer' || s.type === 'number') broken.push(...invalidNumbers(s));
  if (s.type === 'object') broken.push(...invalidObjects(s, resolve));
  if (s.type === 'array') {
    const valid = validValue(s, resolve) as fc.Arbitrary<unknown[]>;
    if (Number(s.minItems ?? 0) > 0) broken.push(fc.constant([]));
    for (const item of invalidValues((s.items as Schema | undefined) ?? {}, resolve)) {
      broken.push(fc.tuple(valid, item).map(([items, bad]) => [...items, bad]));
    }
  }
  return broken;
}

function deref(schema: Schema, resolve: Resolve): Schema {
  const ref = schema.$ref;
  if (typeof ref === 'string') return deref(resolve(ref), resolve);
  if (!Array.isArray(schema.allOf)) return schema;
  // `allOf` of the document: a type and several patterns, all of which must hold.
  const parts = (schema.allOf as Schema[]).map((part) => deref(part, resolve));
  const patterns = [schema, ...parts].map((part) => part.pattern).filter((p): p is string => typeof p === 'string');
  const { allOf: _allOf, ...rest } = schema;
  return Object.assign({}, ...parts, rest, { patterns }) as Schema;
}

function patternsOf(s: Schema): RegExp[] {
  const all = Array.isArray(s.patterns) ? (s.patterns as string[]) : typeof s.pattern === 'string' ? [s.pattern] : [];
  return all.map((pattern) => new RegExp(pattern, 'u'));
}

function validString(s: Schema): fc.Arbitrary<string> {
  const minLength = Number(s.minLength ?? 0);
  const maxLength = Math.min(Number(s.maxLength ?? LONGEST_GENERATED), LONGEST_GENERATED);
  const [first, ...others] = patternsOf(s);
  const base =
    first !== undefined
      ? fc.stringMatching(first)
      : s.format === 'date-time'
        ? fc
            .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
            .map((d) => d.toISOString())
        : fc.string({ minLength, maxLength: Math.min(maxLength, 40), unit: 'grapheme' });
  // A field whose rule JSON Schema cannot state (a bank list, a checksum) is often valid only as its examples are.
  const examples = Array.isArray(s.examples) ? (s.examples as string[]) : [];
  const sampled = examples.length > 0 ? fc.oneof(fc.constantFrom(...examples), base) : base;
  return sampled.filter(
    (text) => [...text].length >= minLength && [...text].length <= maxLength && others.every((re) => re.test(text)),
  );
}

function invalidStrings(s: Schema): fc.Arbitrary<unknown>[] {
  const broken: fc.Arbitrary<unknown>[] = [];
  const patterns = patternsOf(s);
  if (patterns.length > 0) {
    const units = fc.constantFrom('grapheme-ascii', 'grapheme', 'binary') as fc.Arbitrary<'grapheme'>;
    broken.push(
      units.chain((unit) => fc.string({ maxLength: 40, unit })).filter((text) => patterns.some((re) => !re.test(text))),
    );
  }
  if (typeof s.maxLength === 'number' && s.maxLength < 10_000) broken.push(fc.constant('7'.repeat(s.maxLength + 1)));
  if (typeof s.minLength === 'number' && s.minLength > 0) broken.push(fc.constant(''));
  if (s.format === 'date-time') broken.push(fc.constantFrom('2026-02-30T00:00:00Z', '2026-01-01', 'yesterday'));
  return broken;
}

/** The smallest allowed value of a step, or `fallback` when the schema sets none. */
function lowest(s: Schema, step: number, fallback: number): number {
  if (typeof s.exclusiveMinimum === 'number') return s.exclusiveMinimum + step;
  return typeof s.minimum === 'number' ? s.minimum : fallback;
}

function highest(s: Schema, step: number, fallback: number): number {
  if (typeof s.exclusiveMaximum === 'number') return s.exclusiveMaximum - step;
  return typeof s.maximum === 'number' ? s.maximum : fallback;
}

function validNumber(s: Schema): fc.Arbitrary<number> {
  const step = typeof s.multipleOf === 'number' ? s.multipleOf : undefined;
  if (step === undefined) return fc.double({ min: lowest(s, 0, -1e6), max: highest(s, 0, 1e6), noNaN: true });
  // Whole steps, as decimals are written (0.07, not 7 × 0.01 = 0.07000000000000001).
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const min = Math.ceil(lowest(s, step, -1e6) / step);
  const max = Math.floor(highest(s, step, 1e6) / step);
  return fc
    .oneof(fc.integer({ min, max: Math.min(max, min + 10_000) }), fc.integer({ min, max }))
    .map((k) => Number((k * step).toFixed(decimals)));
}

function invalidNumbers(s: Schema): fc.Arbitrary<unknown>[] {
  const broken: fc.Arbitrary<unknown>[] = [];
  if (typeof s.minimum === 'number') broken.push(fc.constant(s.minimum - 1), fc.constant(s.minimum - 0.001));
  if (typeof s.exclusiveMinimum === 'number') broken.push(fc.constant(s.exclusiveMinimum));
  if (typeof s.maximum === 'number') broken.push(fc.constant(s.maximum + 1), fc.constant(s.maximum * 10));
  if (s.type === 'integer') broken.push(fc.constant(1.5));
  if (typeof s.multipleOf === 'number') {
    const step = s.multipleOf;
    broken.push(validNumber(s).map((n) => n + step / 2));
  }
  return broken;
}

function validObject(s: Schema, resolve: Resolve): fc.Arbitrary<Record<string, unknown>> {
  const properties = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set((s.required ?? []) as string[]);
  const known = fc.record(
    Object.fromEntries(Object.entries(properties).map(([name, field]) => [name, validValue(field, resolve)])),
    { requiredKeys: [...required] },
  );
  const extra = s.additionalProperties;
  if (!extra || typeof extra !== 'object') return known;
  // A map (metadata): its keys by `propertyNames`, at most `maxProperties` of them.
  const names = validString({ type: 'string', ...((s.propertyNames ?? {}) as Schema) });
  const maxKeys = Math.min(Number(s.maxProperties ?? 5), 5);
  return fc
    .tuple(known, fc.dictionary(names, validValue(extra as Schema, resolve), { maxKeys }))
    .map(([fixed, free]) => Object.assign(Object.create(null) as Record<string, unknown>, free, fixed));
}

function invalidObjects(s: Schema, resolve: Resolve): fc.Arbitrary<unknown>[] {
  const valid = validObject(s, resolve);
  const properties = (s.properties ?? {}) as Record<string, Schema>;
  const broken: fc.Arbitrary<unknown>[] = [];
  for (const name of (s.required ?? []) as string[]) {
    broken.push(valid.map(({ [name]: _dropped, ...rest }) => rest));
  }
  if (s.additionalProperties === false) broken.push(valid.map((object) => ({ ...object, not_documented: 'x' })));
  if (typeof s.maxProperties === 'number') {
    const count = s.maxProperties + 1;
    broken.push(fc.constant(Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']))));
  }
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    for (const bad of invalidValues(s.additionalProperties as Schema, resolve)) broken.push(bad.map((v) => ({ k: v })));
  }
  const names = (s.propertyNames ?? {}) as Schema;
  if (typeof names.maxLength === 'number') broken.push(fc.constant({ ['k'.repeat(names.maxLength + 1)]: 'v' }));
  if (typeof names.minLength === 'number' && names.minLength > 0) broken.push(fc.constant({ '': 'v' }));
  const refused = (names.not as Schema | undefined)?.const;
  if (typeof refused === 'string') broken.push(fc.constant({ [refused]: 'v' }));
  for (const [name, field] of Object.entries(properties)) {
    for (const bad of invalidValues(field, resolve)) {
      broken.push(fc.tuple(valid, bad).map(([object, value]) => ({ ...object, [name]: value })));
    }
  }
  return broken;
}
