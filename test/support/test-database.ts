/** The migrated PostgreSQL database `scripts/test.ts` prepared for the tests (TEST_DATABASE_URL). */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('run the tests through `npm test` (it starts PostgreSQL and sets TEST_DATABASE_URL)');
  return url;
}
