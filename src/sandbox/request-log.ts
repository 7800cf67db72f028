import { recordedBody } from '../domain/personal-data';

/** One initiation request as the sandbox received it, card data reduced. */
export interface RequestLogEntry {
  id: number;
  received_at: string;
  method: string;
  path: string;
  content_type: string | null;
  /** Empty when the request was turned away before its body was read. */
  body: unknown;
  response_status: number | null;
  transaction_id: number | null;
}

/** Every initiation request received, answered or not, in memory only. */
export class RequestLog {
  private readonly entries: RequestLogEntry[] = [];
  private readonly byRequest = new WeakMap<object, RequestLogEntry>();

  /** Records a request on arrival; its entry is completed as the request proceeds. */
  record(request: object, method: string, path: string, contentType: string | undefined): RequestLogEntry {
    const entry: RequestLogEntry = {
      id: this.entries.length + 1,
      received_at: new Date().toISOString(),
      method,
      path,
      content_type: contentType ?? null,
      body: {},
      response_status: null,
      transaction_id: null,
    };
    this.entries.push(entry);
    this.byRequest.set(request, entry);
    return entry;
  }

  /** The entry recorded for a request, if it is an initiation request. */
  entryFor(request: object): RequestLogEntry | undefined {
    return this.byRequest.get(request);
  }

  list(): RequestLogEntry[] {
    return this.entries;
  }
}

/** Copies a request body with its card data reduced as the personal-data model says (last four digits, no CVV). */
export function redactBody(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return recordedBody(body as Record<string, unknown>);
}
