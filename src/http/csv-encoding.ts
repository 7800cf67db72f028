import { Transform } from 'node:stream';

// CSV as RFC 4180 writes it (CRLF line ends, fields quoted when they must be), safe to open in a spreadsheet.

/** The first characters a spreadsheet reads as a formula (OWASP's list for CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
const MUST_QUOTE = /[",\r\n]/;

/**
 * One field: a value a spreadsheet would run as a formula gets a leading `'`; one with a comma, quote, CR or LF is
 * quoted, its quotes doubled. Null is an empty field.
 */
export function csvField(value: string | null): string {
  if (value === null) return '';
  const inert = FORMULA_START.test(value) ? `'${value}` : value;
  return MUST_QUOTE.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

/** One record: its fields, comma-separated, ended by CRLF. */
export function csvRecord(values: readonly (string | null)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/**
 * Rows (arrays of fields) in, CSV text out, the header record first. Nothing is written before the first row (or the
 * end): a query that fails at once still gets an error answer instead of a cut file.
 */
export function csvEncoder(header: readonly string[]): Transform {
  let started = false;
  const head = () => {
    if (started) return '';
    started = true;
    return csvRecord(header);
  };
  return new Transform({
    writableObjectMode: true,
    transform(row: (string | null)[], _encoding, done) {
      done(null, head() + csvRecord(row));
    },
    flush(done) {
      done(null, head());
    },
  });
}
