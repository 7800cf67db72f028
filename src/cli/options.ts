import { userInfo } from 'node:os';
import { z } from 'zod';
import { parseDuration } from '../domain/duration';
import { OPERATOR_NAME, operatorNameFrom } from '../domain/operator';
import { CliError, EXIT } from './ops-context';

/** A command-line duration (`90s`, `5m`, `2h`, `1d`) in milliseconds. */
export const durationOption = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration like 30s, 5m, 2h or 1d` });
    return z.NEVER;
  }
  return ms;
});

/** `--by`: the operator an action is recorded for. */
export const operatorOption = z.string().regex(OPERATOR_NAME, 'must be an operator name: 1–32 of a-z 0-9 . _ -');

/** The operator an action is recorded for when `--by` is not given: the OS user's name, as an operator name. */
export function defaultOperator(): string {
  return operatorNameFrom(userInfo().username);
}

/** A result limit: 1 to 1000 payments. */
export const limitOption = z.coerce.number().int().min(1).max(1000);

/** Validates a command's options; a bad one stops with a usage error naming the flag (`--older-than: …`). */
export function parseOptions<S extends z.ZodType>(schema: S, options: unknown): z.infer<S> {
  const result = schema.safeParse(options);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    const flag = key ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : 'options';
    return `${flag}: ${issue.message}`;
  });
  throw new CliError(problems.join('; '), EXIT.usage);
}

/** The `--json` flag every command takes, read from the program's global options. */
export function wantsJson(options: Record<string, unknown>): boolean {
  return options.json === true;
}
