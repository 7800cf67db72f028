import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { canonicalJson } from '../../src/crypto/canonical-json';
import { CALLBACK_EVENT_TYPES } from '../../src/domain/payment-model';
import type { PaymentResource } from '../../src/domain/payment-model';
import { isSigned } from '../../src/domain/signed';
import { batchProgressQuery, paymentQuery } from '../../src/workflows/definitions';
import { openDatabase } from '../../src/records/database';
import type { Database } from '../../src/records/database';

// Every record in PostgreSQL against its workflow's final state (its result: what it returned once it had written its
// last record; or, for a payment in review, whose workflow waits for an operator, what its query answers), read directly from the tables rather than through the API, which answers from the
// workflow when a record is missing.

export interface RecordCheckInput {
  client: Client;
  databaseUrl: string;
  /** The payments (single and batch items) the run created. */
  paymentIds: string[];
  batchId: string;
  /** What the API answered for each payment once it was final: a record behind that answer has regressed. */
  answered: Map<string, PaymentResource>;
  /** How long workflows and records may take to finish and catch up. */
  timeoutMs: number;
  log: (line: string) => void;
}

export interface RecordVerdict {
  figures: string[];
  problems: string[];
}

interface RecordRow {
  id: string;
  status: string;
  resource: { status: string; events?: unknown[] };
}

/** Workflows read at once. */
const READERS = 16;
const POLL_MS = 2000;
const PROGRESS_MS = 10_000;

/**
 * A workflow's final state: its result once it completed, else (a payment in review waits for an operator, so its
 * workflow runs on) what its query answers; undefined when it cannot be read now.
 */
async function workflowState(client: Client, id: string, isBatch: boolean): Promise<unknown> {
  const handle = client.workflow.getHandle(id);
  const { status } = await handle.describe();
  if (status.name === 'COMPLETED') {
    const result: unknown = await handle.result();
    // A batch item returns its signed outcome to its batch, not the payment: a worker replays it for the query.
    return isSigned(result) ? handle.query(paymentQuery) : result;
  }
  if (status.name !== 'RUNNING') return undefined;
  return isBatch ? handle.query(batchProgressQuery) : handle.query(paymentQuery);
}

/** Reads the state of each workflow of `ids` into `states`, a few at a time; one that cannot be read is left out. */
async function readStates(client: Client, ids: string[], batchId: string, states: Map<string, unknown>) {
  let next = 0;
  const reader = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      const state = await workflowState(client, id, id === batchId).catch(() => undefined);
      if (state !== undefined) states.set(id, state);
    }
  };
  await Promise.all(Array.from({ length: READERS }, reader));
}

/**
 * Where a workflow whose record still differs stands: its status, its pending workflow task's attempt, and its workflow
 * tasks and markers with their times (a task that failed or timed out names why). A diagnosis printed with the
 * problem, not a verdict.
 */
async function whereItStands(client: Client, id: string): Promise<string> {
  try {
    const handle = client.workflow.getHandle(id);
    const { status, raw } = await handle.describe();
    const task = raw.pendingWorkflowTask;
    const events = (await handle.fetchHistory()).events ?? [];
    const steps = events
      .map((event) => {
        const name = temporal.api.enums.v1.EventType[event.eventType ?? 0]?.replace(/^EVENT_TYPE_/, '') ?? '?';
        const at = new Date(
          Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6),
        );
        const failed = event.workflowTaskFailedEventAttributes;
        const why = failed ? ` (${String(failed.cause)}: ${failed.failure?.message ?? ''})` : '';
        return /WORKFLOW_TASK_(STARTED|FAILED|TIMED_OUT)|MARKER|SIGNALED|COMPLETED$/.test(name)
          ? `${at.toISOString().slice(17, 23)} ${name}${why}`
          : undefined;
      })
      .filter((step) => step !== undefined);
    const pending = task ? `, workflow task attempt ${task.attempt ?? 1} pending` : '';
    return `workflow ${status.name.toLowerCase()}${pending}; ${steps.join(', ')}`;
  } catch (err) {
    return `workflow not described: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function selectRows(db: Database, table: 'payments' | 'batches', ids: string[]) {
  return db.query<RecordRow>(`SELECT id, status, resource FROM ${table} WHERE id = ANY($1)`, [ids]);
}

/** The rows of `ids` in `table`, by id; none while PostgreSQL does not answer. */
async function readRows(db: Database, table: 'payments' | 'batches', ids: string[]): Promise<Map<string, RecordRow>> {
  const { rows } = await selectRows(db, table, ids).catch(() => ({ rows: [] as RecordRow[] }));
  return new Map(rows.map((row) => [row.id, row]));
}

/** Events the server adds to a settled payment's record once its workflow has closed (a late callback). */
const LATE_EVENTS = new Set<string>([
  ...CALLBACK_EVENT_TYPES.filter((type) => type !== 'callback_unconfirmed'),
  'notification_queued',
]);

type Event = { type: string; count?: number };

/**
 * The record equals the workflow's final state, or that state with late callbacks the server recorded after the
 * workflow closed: the same events first (a repeat only counts one up), then late-callback events, and nothing
 * else changed but `updated_at`.
 */
function equals(row: RecordRow | undefined, final: unknown): boolean {
  const status = (final as { status?: string } | undefined)?.status;
  if (row === undefined || row.status !== status) return false;
  if (canonicalJson(row.resource) === canonicalJson(final)) return true;
  const record = row.resource as { events?: Event[] } & Record<string, unknown>;
  const state = final as { events?: Event[] } & Record<string, unknown>;
  const before = state.events ?? [];
  const after = record.events ?? [];
  const uncounted = (e: Event | undefined) => canonicalJson({ ...e, count: undefined });
  const sameStart = before.every(
    (e, i) => uncounted(e) === uncounted(after[i]) && (after[i]?.count ?? 1) >= (e.count ?? 1),
  );
  const lateOnly = after.slice(before.length).every((e) => LATE_EVENTS.has(e.type));
  const rest = (value: Record<string, unknown>) =>
    canonicalJson({ ...value, events: undefined, updated_at: undefined });
  return sameStart && lateOnly && rest(record) === rest(state);
}

/** How a record and its workflow's state differ: status and events, or the first field that differs. */
function difference(row: RecordRow | undefined, final: unknown): string {
  const state = final as { status?: string; events?: Array<{ type: string }> };
  const events = (value: { events?: unknown[] } | undefined) =>
    (value?.events ?? []).map((e) => (e as { type: string }).type).join(' ');
  const record = row?.resource as Record<string, unknown> | undefined;
  const field = Object.keys({ ...record, ...(final as object) }).find(
    (key) => canonicalJson(record?.[key]) !== canonicalJson((final as Record<string, unknown>)[key]),
  );
  const recordEvents = (record?.events ?? []) as unknown[];
  const index = (state.events ?? []).findIndex((e, i) => canonicalJson(e) !== canonicalJson(recordEvents[i]));
  const event =
    field === 'events' && index >= 0
      ? ` (event ${index}: record ${canonicalJson(recordEvents[index])}, workflow ${canonicalJson(state.events?.[index])})`
      : field
        ? ` (record ${canonicalJson(record?.[field]).slice(0, 200)}, workflow ${canonicalJson((final as Record<string, unknown>)[field]).slice(0, 200)})`
        : '';
  return `record ${row?.status}: ${events(row?.resource)}; workflow ${state.status}: ${events(state)}; first field ${field}${event}`;
}

/** A record holding less than the API already answered for it: fewer events, or another final status. */
function regressed(row: RecordRow | undefined, answered: PaymentResource | undefined): boolean {
  if (!row || !answered) return false;
  return row.status !== answered.status || (row.resource.events?.length ?? 0) < answered.events.length;
}

/** What GET answered for a payment beside what its record holds now: status, then each one's events. */
function behind(row: RecordRow | undefined, answered: PaymentResource | undefined): string {
  const events = (list: unknown[] | undefined) =>
    (list ?? [])
      .map((e) => {
        const { type, at } = e as { type: string; at: string };
        return `${type}@${at.slice(11, 23)}`;
      })
      .join(' ');
  return (
    `GET answered ${answered?.status}: ${events(answered?.events)}; ` +
    `record ${row?.status}: ${events(row?.resource.events)}`
  );
}

/**
 * Waits (up to the time-out, printing progress) until every workflow has finished and every record equals its result;
 * then counts the records lost (no row), regressed and still differing.
 */
export async function checkRecords(input: RecordCheckInput): Promise<RecordVerdict> {
  const started = Date.now();
  const deadline = started + input.timeoutMs;
  const ids = [...input.paymentIds, input.batchId];
  const finals = new Map<string, unknown>();
  const db = openDatabase(input.databaseUrl, { max: 2, applicationName: 'chaos record check' });
  let rows = new Map<string, RecordRow>();
  const isEqual = (id: string) => equals(rows.get(id), finals.get(id));
  const progress = setInterval(() => {
    input.log(`${ids.filter(isEqual).length}/${ids.length} records equal their workflows' final state`);
  }, PROGRESS_MS);
  try {
    // Workflow and record read again until they agree: a record waits for its write's next try.
    for (;;) {
      const open = ids.filter((id) => !isEqual(id));
      await readStates(input.client, open, input.batchId, finals);
      const payments = open.filter((id) => id !== input.batchId);
      for (const [id, row] of await readRows(db, 'payments', payments)) rows.set(id, row);
      if (open.includes(input.batchId)) {
        for (const [id, row] of await readRows(db, 'batches', [input.batchId])) rows.set(id, row);
      }
      if (!open.some((id) => !isEqual(id)) || Date.now() >= deadline) break;
      await sleep(POLL_MS);
    }
    // Once more, every one: a record that equalled its workflow and then moved counts too.
    const [payments, batches] = await Promise.all([
      selectRows(db, 'payments', input.paymentIds),
      selectRows(db, 'batches', [input.batchId]),
    ]);
    rows = new Map([...payments.rows, ...batches.rows].map((row) => [row.id, row]));
  } finally {
    clearInterval(progress);
    await db.end();
  }

  const unreadable = ids.filter((id) => !finals.has(id));
  const lost = ids.filter((id) => !rows.has(id));
  const back = input.paymentIds.filter((id) => regressed(rows.get(id), input.answered.get(id)));
  const differing = ids.filter((id) => rows.has(id) && finals.has(id) && !isEqual(id));
  const equal = ids.filter(isEqual).length;
  const standing = new Map<string, string>();
  for (const id of differing.slice(0, 10)) standing.set(id, await whereItStands(input.client, id));
  const list = (label: string, values: string[]) =>
    values.length ? [`records ${label} ${values.length}: ${values.slice(0, 10).join(', ')}`] : [];
  return {
    figures: [
      `records: ${equal}/${ids.length} equal their workflow's final state (${input.paymentIds.length} payments and items, 1 batch), in ${((Date.now() - started) / 1000).toFixed(0)} s after settling`,
      `records lost ${lost.length} · regressed ${back.length} · differing ${differing.length} · workflows unreadable ${unreadable.length}`,
    ],
    problems: [
      ...list('lost (no row in PostgreSQL)', lost),
      ...list(
        'regressed (behind what GET answered)',
        back.map((id) => `${id} (${behind(rows.get(id), input.answered.get(id))})`),
      ),
      ...list(
        'differing from their workflow',
        differing.map((id) => `${id} (${difference(rows.get(id), finals.get(id))}; ${standing.get(id) ?? ''})`),
      ),
      ...list('whose workflow could not be read', unreadable),
    ],
  };
}
