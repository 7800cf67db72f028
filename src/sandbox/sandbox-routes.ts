import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SandboxContext } from './sandbox-context';
import type { ThreeDsDecision } from './lifecycle';
import type { SandboxTransaction } from './store';
import { renderThreeDsPage, renderUnknownTransactionPage } from './three-ds-page';

type IdParams = { Params: { id: string } };

function cardTransaction(context: SandboxContext, id: string): SandboxTransaction | undefined {
  const transaction = /^\d+$/.test(id) ? context.store.get(Number(id)) : undefined;
  return transaction?.type === 'card' ? transaction : undefined;
}

function unknown(reply: FastifyReply, id: string): FastifyReply {
  return reply.code(404).type('text/html; charset=utf-8').send(renderUnknownTransactionPage(id));
}

/** The sandbox's own pages and inspection endpoints, under /sandbox: the ledger and request log need its token. */
export function registerSandboxRoutes(app: FastifyInstance, context: SandboxContext): void {
  app.get<IdParams>('/sandbox/3ds/:id', async (request, reply) => {
    const transaction = cardTransaction(context, request.params.id);
    if (!transaction) return unknown(reply, request.params.id);
    return reply.type('text/html; charset=utf-8').send(renderThreeDsPage(transaction));
  });

  for (const decision of ['approve', 'decline'] as const satisfies readonly ThreeDsDecision[]) {
    // Settling twice (a double click) changes nothing and sends the payer back again.
    app.post<IdParams>(`/sandbox/3ds/:id/${decision}`, async (request, reply) => {
      const transaction = cardTransaction(context, request.params.id);
      if (!transaction) return unknown(reply, request.params.id);
      context.lifecycle.settleThreeDs(transaction, decision);
      return reply.redirect(transaction.return_url ?? `/sandbox/3ds/${transaction.transaction_id}`, 303);
    });
  }

  app.get('/sandbox/transactions', (_request, reply) => reply.send(context.store.list()));
  // A test's (or a developer's) way to make the provider's status query say succeeded without a callback.
  app.post<IdParams>('/sandbox/transactions/:id/succeed', (request, reply) => {
    const known = /^\d+$/.test(request.params.id) && context.store.succeedSilently(Number(request.params.id));
    return known ? reply.code(204).send() : reply.code(404).send({ error: 'no such transaction' });
  });
  app.get('/sandbox/requests', (_request, reply) => reply.send(context.requests.list()));
}
