import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768–60999): a port handed out here is never taken in the meantime by the source
// port of some outgoing connection, as one the kernel picked for `listen(0)` can be on a busy machine.
const FIRST = 20_000;
const COUNT = 12_000;

/** A free TCP port on loopback, outside the range the kernel gives outgoing connections. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = FIRST + Math.floor(Math.random() * COUNT);
    if (await isPortFree(port)) return port;
  }
  return listenPort(0);
}

/** Whether `port` can be listened on, on loopback, now. */
export function isPortFree(port: number): Promise<boolean> {
  return listenPort(port).then(
    () => true,
    () => false,
  );
}

function listenPort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
