import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { z } from 'zod';
import { errorEnvelopeSchema } from '../../src/domain/api-resources';
import { MERCHANT_KEY } from './chaos-stack';

/** How the API answered the harness's merchant: every answer is correct, or a 503 / lost connection a retry resolved. */
export interface AnswerTally {
  correct: number;
  /** 503s answered, each followed by a retry with the same reference. */
  unavailable: number;
  /** 503s that said the records (PostgreSQL) are unreachable, and the slowest of them in ms: at most 2 s each. */
  recordsUnavailable: number;
  slowestRecords503Ms: number;
  /** Refused or reset connections (a killed server), each followed by a retry. */
  connectionLost: number;
  /** Requests whose retries never got a correct answer. */
  unresolved: string[];
  /** Answers that were neither correct nor a 503: must stay empty. */
  wrong: string[];
}

export function newTally(): AnswerTally {
  return {
    correct: 0,
    unavailable: 0,
    recordsUnavailable: 0,
    slowestRecords503Ms: 0,
    connectionLost: 0,
    unresolved: [],
    wrong: [],
  };
}

const CONNECTION_LOST = /ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET|UND_ERR_CLOSED|EPIPE/;
const RETRY_FOR_MS = 120_000;
const RECORDS_503_WITHIN_MS = 2_500;
/** Spreads first attempts over the servers, as a load balancer would. */
let requests = 0;

/**
 * Sends one request as a careful merchant would: on a 503 or a lost connection it sends the same request again
 * (same reference, so the server dedupes), to the other server. Answers are checked against the API's schema and
 * `check`; anything else is counted as wrong.
 */
export async function callApi<S extends z.ZodType>(
  tally: AnswerTally,
  servers: readonly string[],
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  schema: S,
  check: (answer: z.infer<S>) => string | undefined,
  notYet?: { status: number; code: string },
): Promise<z.infer<S> | undefined> {
  const deadline = Date.now() + RETRY_FOR_MS;
  const first = requests++;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const server = servers[(first + attempt) % servers.length];
    const sentAt = Date.now();
    try {
      const response = await request(`${server}${path}`, {
        method,
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      const text = await response.body.text();
      if (response.statusCode === 503) {
        tally.unavailable++;
        if (text.includes('records are unreachable')) {
          const ms = Date.now() - sentAt;
          tally.recordsUnavailable++;
          tally.slowestRecords503Ms = Math.max(tally.slowestRecords503Ms, ms);
          // The API's promise with PostgreSQL gone, frozen or not: a 503 within 2 s (a little slack for a loaded host).
          if (ms > RECORDS_503_WITHIN_MS) tally.wrong.push(`${method} ${path}: a records 503 after ${ms} ms`);
        }
      } else if (response.statusCode === notYet?.status) {
        // A batch item the batch has not started yet is not a payment yet: a correct answer, to ask again later.
        const parsed = errorEnvelopeSchema.safeParse(JSON.parse(text));
        if (!parsed.success || parsed.data.error.code !== notYet.code) {
          tally.wrong.push(`${method} ${path}: HTTP ${response.statusCode} ${text.slice(0, 300)}`);
        } else tally.correct++;
        return undefined;
      } else if (response.statusCode === 200 || response.statusCode === 201) {
        const parsed = schema.safeParse(JSON.parse(text));
        const problem = parsed.success ? check(parsed.data) : `not the documented answer: ${issues(parsed.error)}`;
        if (problem) {
          tally.wrong.push(`${method} ${path}: ${problem}`);
          return undefined;
        }
        tally.correct++;
        return parsed.data;
      } else {
        tally.wrong.push(`${method} ${path}: HTTP ${response.statusCode} ${text.slice(0, 300)}`);
        return undefined;
      }
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (!CONNECTION_LOST.test(code)) {
        tally.wrong.push(`${method} ${path}: ${code} ${(err as Error).message}`);
        return undefined;
      }
      tally.connectionLost++;
    }
    await sleep(Math.min(2000, 250 * 2 ** Math.min(attempt, 3)));
  }
  tally.unresolved.push(`${method} ${path}`);
  return undefined;
}

function issues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
}
