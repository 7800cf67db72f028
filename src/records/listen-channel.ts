import type { Database } from './database';

/**
 * LISTENs on a channel over a connection of its own, calling `onNotification` for each NOTIFY; when that connection
 * breaks (PostgreSQL restarted) it is dropped and `onLost` runs, so the caller listens again later. Answers the
 * function that stops listening.
 */
export async function listenOn(
  db: Database,
  channel: string,
  onNotification: () => void,
  onLost: () => void,
): Promise<() => void> {
  const client = await db.connect();
  let released = false;
  const release = () => {
    if (!released) client.release(true);
    released = true;
  };
  client.on('notification', onNotification);
  client.on('error', () => {
    release();
    onLost();
  });
  try {
    await client.query(`LISTEN ${channel}`);
  } catch (err) {
    release();
    throw err;
  }
  return release;
}
