import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SearchAttributes } from '../workflows/definitions';

const INDEXED_TYPE = {
  KEYWORD: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  DOUBLE: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
} as const;

/** Registers the payment search attributes in a namespace (for servers started without them). */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const searchAttributes = Object.fromEntries(
    Object.values(SearchAttributes).map((key) => [key.name, INDEXED_TYPE[key.type]]),
  );
  await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
}
