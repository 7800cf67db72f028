import { Readable, pipeline } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { CsvError, parse } from 'csv-parse';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BankDirectory } from '../banks/directory';
import { payoutBatchSchema } from '../domain/batch-request';
import type { PayoutBatchRequest } from '../domain/batch-request';
import type { RequestRules } from '../domain/requests';
import type { ApiKeys } from './auth';
import { assertKnownBanks } from './bank-check';
import { ApiError, validationError } from './http-errors';
import type { FieldError } from './http-errors';

// A payout batch uploaded as a file: CSV with a header row, or JSON lines (one item per line). The body is read as a
// stream up to the route's byte limit, every row is checked with the same schema as a JSON batch, and a 400 names the
// line and column of each bad row, before anything starts.

/** The content types `POST /v1/payout-batches` takes besides JSON. */
export const UPLOAD_TYPES = ['text/csv', 'application/x-ndjson'] as const;

/** The columns of a CSV upload, any order, named by its header row; all but `description` required. */
export const UPLOAD_CSV_COLUMNS = [
  { name: 'reference', required: true, description: "the item's reference, unique within the batch" },
  { name: 'amount', required: true, description: 'in major units with at most two decimals (`250.00`)' },
  { name: 'customer_name', required: true, description: "the account holder's name" },
  { name: 'bank_code', required: true, description: 'the bank (`GET /v1/banks`… as for a bank credit)' },
  { name: 'account_number', required: true, description: '4–34 letters or digits' },
  { name: 'description', required: false, description: 'free text shown to the payee; may be empty' },
] as const;

/** How many bad fields a 400 lists at most; its message says how many there are in all. */
export const MAX_LISTED_ERRORS = 100;

/** Where what a file holds came from: the line each item starts on. */
interface Upload {
  /** What a line's part is called in an error: a CSV column, a JSON field. */
  part: 'column' | 'field';
  /** False when the file could not be read as items at all (no usable header row): only its errors are told. */
  readable: boolean;
  items: unknown[];
  lines: number[];
  errors: LineError[];
}

interface LineError extends FieldError {
  line: number;
}

const DECIMAL = /^\d+(\.\d+)?$/;

/** Each file upload's items' lines, for the checks the route makes after the body is read (the banks). */
const uploads = new WeakMap<FastifyRequest, Upload>();

/**
 * Registers the CSV and JSON-lines parsers on a scope (the batch creation route's own): the body becomes the same
 * `{reference, items}` a JSON batch sends, the reference from the `reference` query parameter, checked for the
 * caller's merchant; or a 400 naming each bad line, or a 413 past the route's body limit.
 */
export function addUploadParsers(scope: FastifyInstance, deps: { keys: ApiKeys; rules: RequestRules }): void {
  const read = async (
    request: FastifyRequest,
    payload: Readable,
    parseUpload: (chunks: Readable) => Promise<Upload>,
  ) => {
    assertUtf8(request);
    return checked(request, deps, await parseUpload(Readable.from(limited(request, payload))));
  };
  scope.addContentTypeParser('text/csv', (request: FastifyRequest, payload: Readable) =>
    read(request, payload, csvUpload),
  );
  scope.addContentTypeParser('application/x-ndjson', (request: FastifyRequest, payload: Readable) =>
    read(request, payload, jsonLinesUpload),
  );
}

/** A 415 for a file in another encoding than UTF-8 (read as UTF-8, its names would change silently). */
function assertUtf8(request: FastifyRequest): void {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError(415, 'unsupported_media_type', 'send the file in UTF-8');
  }
}

/** The body's bytes, refused with a 413 past the route's limit (left unread then: fastify closes the connection). */
async function* limited(request: FastifyRequest, payload: Readable): AsyncGenerator<Buffer> {
  const limit = request.routeOptions.bodyLimit ?? Infinity;
  const tooLarge = () => new ApiError(413, 'payload_too_large', `the body is larger than allowed (${limit} bytes)`);
  if (Number(request.headers['content-length']) > limit) throw tooLarge();
  let received = 0;
  // Not destroyed on a 413: destroying the request would cut the socket before the answer is written.
  for await (const chunk of payload.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > limit) throw tooLarge();
    yield chunk;
  }
}

/** Reads a CSV upload: a header row naming the columns, then one item per record. */
async function csvUpload(source: Readable): Promise<Upload> {
  const upload: Upload = { part: 'column', readable: true, items: [], lines: [], errors: [] };
  const parser = parse({
    bom: true,
    info: true,
    skip_empty_lines: true,
    relax_column_count: true,
    record_delimiter: ['\r\n', '\n'],
  });
  pipeline(source, parser, () => {
    // Failures reach the loop below through the parser.
  });
  let header: string[] | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      // A quoted field may hold line ends: the record starts that many lines before the one it ends on.
      const line = info.lines - (record.join('').match(/\n/g)?.length ?? 0);
      if (!header) {
        header = record.map((name) => name.trim());
        const headerErrors = csvHeaderErrors(header);
        if (headerErrors.length > 0) return { ...upload, readable: false, errors: headerErrors };
        continue;
      }
      if (record.length !== header.length) {
        const message = `has ${record.length} fields; the header row has ${header.length}`;
        upload.errors.push({ line, path: `line ${line}`, message });
        continue;
      }
      upload.items.push(csvItem(header, record, line, upload.errors));
      upload.lines.push(line);
    }
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    const line = typeof err.lines === 'number' ? err.lines : 0;
    upload.errors.push({ line, path: `line ${line}`, message: err.message });
  }
  if (header) return upload;
  const message = 'must be the header row naming the columns';
  return { ...upload, readable: false, errors: [...upload.errors, { line: 1, path: 'line 1', message }] };
}

function csvHeaderErrors(header: readonly string[]): LineError[] {
  const known = new Set<string>(UPLOAD_CSV_COLUMNS.map(({ name }) => name));
  const at = (column: string, message: string): LineError => ({ line: 1, path: `line 1, column ${column}`, message });
  return [
    ...header.filter((name) => !known.has(name)).map((name) => at(name, 'is not a known column')),
    ...header.filter((name, i) => header.indexOf(name) !== i).map((name) => at(name, 'is named twice')),
    ...UPLOAD_CSV_COLUMNS.filter(({ name, required }) => required && !header.includes(name)).map(({ name }) =>
      at(name, 'is missing from the header row'),
    ),
  ];
}

/** One record as a batch item: an empty `description` is none; the amount a number (or an error of this line). */
function csvItem(header: readonly string[], record: readonly string[], line: number, errors: LineError[]) {
  const item: Record<string, string | number> = {};
  header.forEach((name, i) => {
    const cell = record[i] ?? '';
    if (name === 'description' && cell.trim() === '') return;
    item[name] = cell;
  });
  const amount = String(item.amount ?? '').trim();
  if (DECIMAL.test(amount)) item.amount = Number(amount);
  else {
    errors.push({ line, path: `line ${line}, column amount`, message: 'must be a number such as 250.00' });
    // A stand-in the schema takes, so the line's other fields are still checked.
    item.amount = 0.01;
  }
  return item;
}

/** Reads a JSON-lines upload: one item (a JSON object, as in a JSON batch's `items`) per non-empty line. */
async function jsonLinesUpload(source: Readable): Promise<Upload> {
  const upload: Upload = { part: 'field', readable: true, items: [], lines: [], errors: [] };
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let line = 0;
  const take = (text: string) => {
    line++;
    const json = (line === 1 ? text.replace(/^\uFEFF/, '') : text).trim();
    if (json === '') return;
    try {
      upload.items.push(JSON.parse(json));
      upload.lines.push(line);
    } catch {
      upload.errors.push({ line, path: `line ${line}`, message: 'is not valid JSON' });
    }
  };
  for await (const chunk of source as AsyncIterable<Buffer>) {
    const lines = (rest + decoder.write(chunk)).split('\n');
    rest = lines.pop() ?? '';
    lines.forEach(take);
  }
  take(rest + decoder.end());
  return upload;
}

/**
 * The upload as a batch request, checked with the schema of a JSON batch for the caller's merchant; a 400 listing the
 * first errors by line (and how many in all) when any line is bad.
 */
function checked(request: FastifyRequest, deps: { keys: ApiKeys; rules: RequestRules }, upload: Upload) {
  if (!upload.readable) throw invalid(upload.errors);
  const caller = deps.keys.authenticate(request);
  const merchantId = caller.role === 'merchant' ? caller.merchantId : '*';
  const query = request.query as Record<string, unknown>;
  const body = { reference: query.reference, items: upload.items };
  const parsed = payoutBatchSchema(deps.rules.maxAmount(merchantId)).safeParse(body);
  const errors = parsed.success ? upload.errors : [...upload.errors, ...located(parsed.error, upload)];
  if (errors.length === 0 && parsed.success) {
    uploads.set(request, upload);
    return parsed.data satisfies PayoutBatchRequest;
  }
  throw invalid(errors);
}

/**
 * Refuses (400) items whose bank the provider does not list, each named by its path: `items.3.bank_code` in a JSON
 * batch, its line in a file (`line 5, column bank_code`, the first 100 listed as for the file's other errors).
 */
export async function assertItemBanks(
  request: FastifyRequest,
  banks: BankDirectory,
  items: readonly { bank_code: string }[],
): Promise<void> {
  const upload = uploads.get(request);
  const path = (index: number) => {
    const line = upload?.lines[index];
    return upload && line !== undefined ? `line ${line}, ${upload.part} bank_code` : `items.${index}.bank_code`;
  };
  try {
    await assertKnownBanks(
      banks,
      items.map((item, index) => ({ path: path(index), code: item.bank_code })),
    );
  } catch (err) {
    if (!upload || !(err instanceof ApiError) || err.statusCode !== 400) throw err;
    const lineOf = (field: FieldError) => Number(/^line (\d+)/.exec(field.path)?.[1] ?? 0);
    throw invalid(err.fields.map((field) => ({ ...field, line: lineOf(field) })));
  }
}

/** The 400 of a bad upload: its first errors by line, and how many in all. */
function invalid(errors: LineError[]): ApiError {
  errors.sort((a, b) => a.line - b.line);
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map(({ path, message }) => ({ path, message }));
  const count = errors.length === 1 ? '1 error' : `${errors.length} errors`;
  const shown = errors.length > listed.length ? `; the first ${listed.length} are listed` : '';
  return new ApiError(400, 'invalid_request', `the batch is invalid: ${count}${shown}`, listed);
}

/** The schema's errors by line: `items.3.amount` becomes `line 5, column amount` (the item's line, its field). */
function located(error: Parameters<typeof validationError>[0], { lines, part }: Upload): LineError[] {
  const lineOf = (index: string) => lines[Number(index)] ?? 0;
  return validationError(error).fields.map(({ path, message }) => {
    // A repeated reference names the line of its first use.
    const text = message.replace(/items\.(\d+)\.reference/, (_all, index: string) => `line ${lineOf(index)}`);
    const match = /^items\.(\d+)(?:\.(.+))?$/.exec(path);
    if (path === 'reference') return { line: 0, path: 'query.reference', message: `${text} (the batch's reference)` };
    if (!match?.[1]) return { line: 0, path, message: text };
    const line = lineOf(match[1]);
    return { line, path: match[2] ? `line ${line}, ${part} ${match[2]}` : `line ${line}`, message: text };
  });
}
