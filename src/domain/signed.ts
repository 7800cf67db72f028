// Plain types and checks (no Node modules): the workflow bundle imports this module.

/**
 * What a signed message may do: start a payment, a batch or a batch item, or be a callback, resolution or control
 * (the server's); or be an activity's result or a batch item's report (the worker's).
 */
export type MessageKind =
  | 'payment'
  | 'batch'
  | 'batch-item'
  | 'callback'
  | 'resolution'
  | 'batch-control'
  | 'approval'
  | ResultKind
  | 'batch-item-report';

/** The kinds of activity results a workflow acts on: each is signed by the worker for one activity of one run. */
export type ResultKind =
  | 'initiation-result'
  | 'initiation-verdict'
  | 'status-result'
  | 'confirmation-result'
  | 'batch-items'
  | 'item-outcomes';

const WORKER_KINDS = new Set<MessageKind>([
  'initiation-result',
  'initiation-verdict',
  'status-result',
  'confirmation-result',
  'batch-items',
  'item-outcomes',
  'batch-item-report',
]);

/** Where a message may act: the Temporal namespace and task queue it was signed for. */
export interface MessageScope {
  namespace: string;
  taskQueue: string;
}

/** The activity a result was signed for (the worker fills it from the activity's own info). */
export interface ActivityBinding {
  runId: string;
  activityId: string;
  attempt: number;
}

/**
 * A message signed for one workflow, in one namespace and task queue, once (its nonce) and until `expiresAt`. The
 * signature (HMAC-SHA256 with SIGNING_KEYS over every other field, canonical JSON) is checked by the worker's codec
 * before the workflow sees it, so a workflow only has to check that the message is signed at all, for it, here, now
 * and for the first time (`messageRefusal`, `SeenNonces`).
 */
export interface Signed<T> extends MessageScope, Partial<ActivityBinding> {
  kind: MessageKind;
  workflowId: string;
  issuedAt: string;
  expiresAt: string;
  /** Random (16 bytes, base64url): a handler acts on each nonce once. */
  nonce: string;
  body: T;
  /** `key id.base64url HMAC`. */
  signature: string;
}

/** What the worker's codec hands a workflow in place of a message whose signature does not verify. */
export interface Unverified {
  unverified: string;
}

/** What a message is checked against: the workflow it acts on, where it runs, and (in a workflow) its time. */
export interface MessageTarget extends MessageScope {
  workflowId: string;
  /** Workflow time; without it (the initiation activity's check of a start message) expiry is not checked. */
  now?: Date;
}

/** True for a value shaped like a signed message (the worker's codec has verified every such value it passed on). */
export function isSigned(value: unknown): value is Signed<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { signature?: unknown }).signature === 'string'
  );
}

/** The body of a signed message. */
export function messageBody<T>(message: Signed<T>): T {
  return message.body;
}

/** The reason a message may not act on this workflow, or undefined when it may. */
export function messageRefusal(message: unknown, kind: MessageKind, target: MessageTarget): string | undefined {
  if (typeof message === 'object' && message !== null && 'unverified' in message) {
    return `its signature does not verify (${String((message as Unverified).unverified)})`;
  }
  if (!isSigned(message)) return `it is not signed by ${WORKER_KINDS.has(kind) ? 'a worker' : 'the server'}`;
  if (message.kind !== kind) return `it was signed as a ${message.kind} message, not a ${kind} message`;
  if (message.workflowId !== target.workflowId)
    return `it was signed for ${message.workflowId}, not ${target.workflowId}`;
  if (message.namespace !== target.namespace) return `it was signed for namespace ${message.namespace}`;
  if (message.taskQueue !== target.taskQueue) return `it was signed for task queue ${message.taskQueue}`;
  if (target.now && !(Date.parse(message.expiresAt) >= target.now.getTime())) {
    return `it expired at ${message.expiresAt}`;
  }
  return undefined;
}

/**
 * The nonces of messages a workflow acted on, each kept until its message expires (after that the message is refused
 * as expired anyway). A batch carries them across continue-as-new (`entries`).
 */
export class SeenNonces {
  private readonly seen: Map<string, string>;

  constructor(entries: Record<string, string> = {}) {
    this.seen = new Map(Object.entries(entries));
  }

  /** Why the message was already acted on, or undefined. */
  refusal(message: Signed<unknown>): string | undefined {
    return this.seen.has(message.nonce) ? `it was already received (nonce ${message.nonce})` : undefined;
  }

  /** Remembers the message's nonce and forgets those expired by `now`. */
  remember(message: Signed<unknown>, now: Date): void {
    for (const [nonce, expiresAt] of this.seen) if (Date.parse(expiresAt) < now.getTime()) this.seen.delete(nonce);
    this.seen.set(message.nonce, message.expiresAt);
  }

  /** The nonces as a plain record, to carry across continue-as-new. */
  entries(): Record<string, string> {
    return Object.fromEntries(this.seen);
  }
}
