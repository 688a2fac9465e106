import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { toJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { MemberRole } from "../gen/gateway/v1/members_pb.js";
import { OperatorService } from "../gen/gateway/v1/operator_pb.js";
import { Entitlement } from "../gen/gateway/v1/options_pb.js";
import { httpErrorOf, errorMessage } from "../wire/errors.js";
import { OPERATOR_TOKEN_FILE } from "../server/platform/secrets/local-secrets.js";

const USAGE = `Usage: npm run admin -- <command>

  org create <name> [--interns] [--private-endpoints] [--owner-email <email>]
  org list
  entitlement grant|revoke <organization-id> interns|private-endpoints
  member add <organization-id> <email> [--first-name <name>] [--last-name <name>] [--role admin|member]
  member list <organization-id>
  member remove <organization-id> <user-id>
  key create <organization-id> <name> [--management] [--member <user-id>] [--workspace <uuid>] [--limit <usd>]

An organization is created with its owner member (--owner-email, default the gateway's
GATEWAY_OWNER_EMAIL); a key created without --member belongs to the owner.

Environment: GATEWAY_GRPC_URL (default http://127.0.0.1:$GRPC_PORT, GRPC_PORT default 50051),
GATEWAY_OPERATOR_TOKEN (default: the file ${OPERATOR_TOKEN_FILE} in GATEWAY_DATA_DIR, default .data).`;

/**
 * `npm run admin -- <command>`: the operator's command line, a gRPC client of OperatorService.
 * It reaches the core at GATEWAY_GRPC_URL (default http://127.0.0.1:$GRPC_PORT) and authenticates
 * with GATEWAY_OPERATOR_TOKEN or the token file the gateway keeps in GATEWAY_DATA_DIR. A function
 * of its arguments, environment and output streams, so that tests run it in-process; admin.ts
 * is the process around it. Returns the exit status: 0, 1 for an error of the gateway, 2 for bad usage.
 */
export interface AdminOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const ENTITLEMENTS: Record<string, Entitlement> = {
  interns: Entitlement.INTERNS,
  "private-endpoints": Entitlement.PRIVATE_ENDPOINTS,
};

export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv, out: AdminOutput): Promise<number> {
  try {
    await run(argv, env, out);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      out.stderr(`admin: ${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    const { status, message } = httpErrorOf(ConnectError.from(err));
    out.stderr(`admin: ${status} ${message}\n`);
    return 1;
  }
}

class UsageError extends Error {}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        interns: { type: "boolean" },
        "private-endpoints": { type: "boolean" },
        "owner-email": { type: "string" },
        "first-name": { type: "string" },
        "last-name": { type: "string" },
        role: { type: "string" },
        management: { type: "boolean" },
        member: { type: "string" },
        workspace: { type: "string" },
        limit: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
}

function operatorToken(env: NodeJS.ProcessEnv): string {
  const fromEnv = env.GATEWAY_OPERATOR_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  const file = path.resolve(env.GATEWAY_DATA_DIR ?? ".data", OPERATOR_TOKEN_FILE);
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    throw new UsageError(
      `No operator token: set GATEWAY_OPERATOR_TOKEN or start the gateway once so that it writes ${file}`,
    );
  }
}

async function run(argv: string[], env: NodeJS.ProcessEnv, out: AdminOutput): Promise<void> {
  const { values: flags, positionals } = parse(argv);
  const arg = (index: number, what: string): string => {
    const value = positionals[index];
    if (!value) throw new UsageError(`missing ${what}`);
    return value;
  };
  const print = <Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): void => {
    out.stdout(`${JSON.stringify(toJson(schema, message, { useProtoFieldName: true }), null, 2)}\n`);
  };
  if (flags.help || positionals.length === 0) {
    out.stdout(`${USAGE}\n`);
    return;
  }
  const grpcUrl = env.GATEWAY_GRPC_URL ?? `http://127.0.0.1:${env.GRPC_PORT ?? "50051"}`;
  const token = operatorToken(env);
  const client = createClient(OperatorService, createGrpcTransport({ baseUrl: grpcUrl }));
  const headers = { authorization: `Bearer ${token}` };
  const methods = OperatorService.method;
  const command = `${positionals[0]} ${positionals[1] ?? ""}`.trim();

  switch (command) {
    case "org create": {
      const entitlements = Object.entries(ENTITLEMENTS)
        .filter(([flag]) => flags[flag as keyof typeof flags])
        .map(([, e]) => e);
      print(
        methods.createOrganization.output,
        await client.createOrganization(
          { name: arg(2, "organization name"), entitlements, ownerEmail: flags["owner-email"] },
          { headers },
        ),
      );
      return;
    }
    case "org list":
      print(methods.listOrganizations.output, await client.listOrganizations({}, { headers }));
      return;
    case "entitlement grant":
    case "entitlement revoke": {
      const entitlement = ENTITLEMENTS[arg(3, "entitlement (interns or private-endpoints)")];
      if (entitlement === undefined) throw new UsageError("the entitlement is interns or private-endpoints");
      const request = { organizationId: arg(2, "organization id"), entitlement, enabled: positionals[1] === "grant" };
      print(methods.setEntitlement.output, await client.setEntitlement(request, { headers }));
      return;
    }
    case "member add": {
      const role =
        flags.role === undefined
          ? MemberRole.MEMBER
          : { admin: MemberRole.ADMIN, member: MemberRole.MEMBER }[flags.role];
      if (role === undefined) throw new UsageError("--role is admin or member");
      const member = { email: arg(3, "email"), firstName: flags["first-name"], lastName: flags["last-name"], role };
      print(
        methods.createMember.output,
        await client.createMember({ organizationId: arg(2, "organization id"), member }, { headers }),
      );
      return;
    }
    case "member list":
      print(
        methods.listMembers.output,
        await client.listMembers({ organizationId: arg(2, "organization id") }, { headers }),
      );
      return;
    case "member remove":
      print(
        methods.deleteMember.output,
        await client.deleteMember(
          { organizationId: arg(2, "organization id"), userId: arg(3, "user id") },
          { headers },
        ),
      );
      return;
    case "key create": {
      const limit = flags.limit === undefined ? undefined : Number(flags.limit);
      if (limit !== undefined && !Number.isFinite(limit)) throw new UsageError("--limit is a number of USD");
      const key = {
        name: arg(3, "key name"),
        isManagementKey: flags.management ?? false,
        creatorUserId: flags.member,
        workspaceId: flags.workspace,
        limit,
      };
      print(
        methods.createKey.output,
        await client.createKey({ organizationId: arg(2, "organization id"), key }, { headers }),
      );
      return;
    }
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}
