// Reading a process's settings: every bad variable named, no value echoed, production rules applied.
import { z } from 'zod';
import { temporalSettingProblems } from '../temporal/connection-settings';
import { productionProblems } from './production-rules';

export class ConfigError extends Error {}

/** Validates the environment against a schema; the error names every bad variable and never echoes a value. */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(present);
  const lines = result.success
    ? []
    : result.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? '(environment)');
        const message = present[name] === undefined ? 'is required' : issue.message;
        return `  ${name}: ${message}`;
      });
  if (present.NODE_ENV === 'production' && schema instanceof z.ZodObject) {
    for (const line of productionProblems(present, Object.keys(schema.shape))) {
      if (!lines.some((known) => known.startsWith(line.slice(0, line.indexOf(':') + 1)))) lines.push(line);
    }
  }
  if (schema instanceof z.ZodObject && 'TEMPORAL_TLS' in schema.shape) {
    for (const { setting, problem } of temporalSettingProblems(present, present.NODE_ENV === 'production')) {
      if (!lines.some((line) => line.startsWith(`  ${setting}:`))) lines.push(`  ${setting}: ${problem}`);
    }
  }
  if (lines.length === 0 && result.success) return result.data;
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

/** Loads configuration for a process entry, or prints what is wrong and exits. */
export function loadConfigOrExit<S extends z.ZodType>(schema: S, processName: string): z.infer<S> {
  try {
    return parseConfig(schema, process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${processName}: ${err.message}\n`);
    process.exit(1);
  }
}
