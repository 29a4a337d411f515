import { GatewayVpcEndpointAwsService, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';

/**
 * The network FargateWorkers creates when given none: two AZs, public subnets (for the NAT
 * gateway, and for tasks only when a public IP is asked for) and private subnets with egress
 * where the tasks run, one NAT gateway, and gateway endpoints for DynamoDB (every lease, renew
 * and ack stays off the NAT and its per-GB charge) and S3 (image layers from ECR). Gateway
 * endpoints are free.
 */
export class WorkerVpc extends Construct {
  /** The VPC. */
  readonly vpc: Vpc;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 1,
      subnetConfiguration: [
        { name: 'Public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'Workers', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
      ],
      gatewayEndpoints: {
        DynamoDb: { service: GatewayVpcEndpointAwsService.DYNAMODB },
        S3: { service: GatewayVpcEndpointAwsService.S3 },
      },
    });
  }
}
