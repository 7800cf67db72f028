// Plain types and checks (no Node modules): the workflow bundle imports this module.

/**
 * What a signed message may do: start a payment, a batch or a batch item, or be a callback, resolution or control.
 */
export type MessageKind = 'payment' | 'batch' | 'batch-item' | 'callback' | 'resolution' | 'batch-control';

/**
 * A message the server signed for one workflow. The signature (HMAC-SHA256 with SIGNING_KEYS over kind, workflow id,
 * issue time and body) is checked by the worker's codec before the workflow sees it, so a workflow only has to check
 * that the message is signed at all and was signed for it.
 */
export interface Signed<T> {
  kind: MessageKind;
  workflowId: string;
  issuedAt: string;
  body: T;
  /** `key id.base64url HMAC`. */
  signature: string;
}

/** What the worker's codec hands a workflow in place of a message whose signature does not verify. */
export interface Unverified {
  unverified: string;
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
export function messageRefusal(message: unknown, kind: MessageKind, workflowId: string): string | undefined {
  if (typeof message === 'object' && message !== null && 'unverified' in message) {
    return `its signature does not verify (${String((message as Unverified).unverified)})`;
  }
  if (!isSigned(message)) return 'it is not signed by the server';
  if (message.kind !== kind) return `it was signed as a ${message.kind} message, not a ${kind} message`;
  if (message.workflowId !== workflowId) return `it was signed for ${message.workflowId}, not ${workflowId}`;
  return undefined;
}
