import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption, type Attribute } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { AttributeDefinition, KeySchemaElement, ProjectionType as SdkProjectionType, ScalarAttributeType } from '@aws-sdk/client-dynamodb';
import { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../src/schema.js';
import { createTableInput } from '../src/store/core/ensure-table.js';

/** Props of {@link JobTable}. */
export interface JobTableProps {
  /** Physical table name. @default a name CloudFormation generates */
  readonly tableName?: string;
  /** A customer managed KMS key to encrypt the table with. @default an AWS owned key */
  readonly encryptionKey?: IKey;
}

/**
 * The jobs table, built from the very CreateTable input `ensureTable()` and the tests use
 * (src/store/core/ensure-table.ts, from TABLE_SCHEMA): keys, the work index, its projection and the
 * TTL attribute cannot drift. On-demand, point-in-time recovery, retained, deletion-protected,
 * optionally under a customer managed KMS key.
 */
export class JobTable extends Construct {
  /** The table. */
  readonly table: Table;

  constructor(scope: Construct, id: string, props: JobTableProps = {}) {
    super(scope, id);
    const input = createTableInput('shape-only');
    const key = (schema: KeySchemaElement[] | undefined, type: 'HASH' | 'RANGE') => attribute(input.AttributeDefinitions, schema, type);
    this.table = new Table(this, 'Table', {
      tableName: props.tableName,
      partitionKey: key(input.KeySchema, 'HASH')!,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
      ...(props.encryptionKey ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey } : {}),
    });
    for (const gsi of input.GlobalSecondaryIndexes ?? []) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.IndexName!,
        partitionKey: key(gsi.KeySchema, 'HASH')!,
        sortKey: key(gsi.KeySchema, 'RANGE'),
        projectionType: PROJECTION_TYPE[gsi.Projection!.ProjectionType!],
        nonKeyAttributes: gsi.Projection!.NonKeyAttributes,
      });
    }
  }
}

/** The CDK attribute of one key role (HASH or RANGE), typed from the CreateTable attribute definitions. */
function attribute(defs: AttributeDefinition[] | undefined, schema: KeySchemaElement[] | undefined, type: 'HASH' | 'RANGE'): Attribute | undefined {
  const name = schema?.find((k) => k.KeyType === type)?.AttributeName;
  const def = defs?.find((d) => d.AttributeName === name);
  return name && def ? { name, type: ATTRIBUTE_TYPE[def.AttributeType!] } : undefined;
}

// The SDK's strings as the CDK's enums, spelled out so that a value either side lacks fails to compile.
const ATTRIBUTE_TYPE: Record<ScalarAttributeType, AttributeType> = { S: AttributeType.STRING, N: AttributeType.NUMBER, B: AttributeType.BINARY };
const PROJECTION_TYPE: Record<SdkProjectionType, ProjectionType> = {
  ALL: ProjectionType.ALL,
  KEYS_ONLY: ProjectionType.KEYS_ONLY,
  INCLUDE: ProjectionType.INCLUDE,
};
