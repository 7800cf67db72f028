import { SUCCESS_MESSAGE } from './scenarios';
import { randomInt } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';

const callbackSchema = z.object({
  status: z.enum(['1', '0']),
  message: z.string(),
  notify: z.boolean(),
  due_at: z.string(),
  applied: z.boolean(),
  state: z.enum(['scheduled', 'delivered', 'failed', 'not_sent']),
  attempts: z.number().int(),
  last_error: z.string().nullable(),
  delivered_at: z.string().nullable(),
});

const transactionSchema = z.object({
  transaction_id: z.number().int(),
  type: z.enum(['mobile_money', 'card', 'bank_credit']),
  reference: z.string(),
  amount: z.number(),
  scenario: z.enum([
    'success',
    'failure',
    'silent_success',
    'silent_pending',
    'server_error',
    'slow_response',
    'triple_callback',
    'success_then_failure',
    'rejected',
    'callback_first',
  ]),
  status: z.enum(['2', '1', '0']),
  message: z.string(),
  callback_url: z.string().nullable(),
  return_url: z.string().nullable(),
  three_ds: z.enum(['pending', 'approved', 'declined', 'skipped']).nullable(),
  card_last4: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  callbacks: z.array(callbackSchema),
});

const dataFileSchema = z.object({
  version: z.literal(1),
  next_id: z.number().int(),
  transactions: z.array(transactionSchema),
});

/** One outcome of a transaction and the state of its delivery to the callback URL. */
export type CallbackRecord = z.infer<typeof callbackSchema>;
/** A transaction as the sandbox keeps it (and lists it under /sandbox/transactions). */
export type SandboxTransaction = z.infer<typeof transactionSchema>;

const LANES = 1000;

/** Transactions in memory, written through to an optional JSON file so they survive restarts. */
export class TransactionStore {
  // Like the provider's, ids never repeat, even across sandboxes without a data file that share one system of record
  // (it binds each transaction to one payment): an id is the clock's millisecond times 1,000 plus this store's lane
  // (the last three digits of every id it hands out, a random 0-999 for a fresh store), so two sandboxes started in the
  // same millisecond differ unless they drew the same lane.
  private nextId: number;
  private readonly byId = new Map<number, SandboxTransaction>();

  constructor(
    private readonly dataFile?: string,
    lane = randomInt(LANES),
  ) {
    this.nextId = lane;
    if (dataFile) this.load(dataFile);
  }

  /** Hands out the next transaction id; ids only grow, across restarts too. */
  allocateId(): number {
    const lane = this.nextId % LANES;
    const floor = Math.max(this.nextId, Date.now() * LANES);
    const id = floor + ((lane - (floor % LANES) + LANES) % LANES);
    this.nextId = id + LANES;
    this.save();
    return id;
  }

  add(transaction: SandboxTransaction): void {
    this.byId.set(transaction.transaction_id, transaction);
    this.save();
  }

  get(id: number): SandboxTransaction | undefined {
    return this.byId.get(id);
  }

  /**
   * Marks a transaction succeeded at the provider without calling back (what a real provider whose callback was lost
   * shows its status query); false for an unknown id.
   */
  succeedSilently(id: number): boolean {
    const transaction = this.byId.get(id);
    if (!transaction) return false;
    Object.assign(transaction, { status: '1', message: SUCCESS_MESSAGE, updated_at: new Date().toISOString() });
    this.save();
    return true;
  }

  /** The latest transaction with this reference. */
  findByReference(reference: string): SandboxTransaction | undefined {
    return this.list()
      .reverse()
      .find((transaction) => transaction.reference === reference);
  }

  list(): SandboxTransaction[] {
    return [...this.byId.values()];
  }

  /** Persists the current state; callers invoke it after mutating a transaction. */
  save(): void {
    if (!this.dataFile) return;
    const data: z.infer<typeof dataFileSchema> = { version: 1, next_id: this.nextId, transactions: this.list() };
    mkdirSync(dirname(this.dataFile), { recursive: true });
    const temporary = `${this.dataFile}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(data, null, 2));
    renameSync(temporary, this.dataFile);
  }

  private load(dataFile: string): void {
    let text: string;
    try {
      text = readFileSync(dataFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    let parsed: z.infer<typeof dataFileSchema>;
    try {
      parsed = dataFileSchema.parse(JSON.parse(text));
    } catch (error) {
      throw new Error(`${dataFile} is not a sandbox data file: ${(error as Error).message}`);
    }
    this.nextId = parsed.next_id;
    for (const transaction of parsed.transactions) this.byId.set(transaction.transaction_id, transaction);
  }
}
