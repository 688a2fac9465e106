/**
 * An intern as the services read it (table `interns`, migration 0009-interns). The wire shape is
 * the `Intern` message of proto/gateway/v1/interns.proto.
 *
 * @module
 */

export type InternStatusName =
  | "queued"
  | "provisioning"
  | "running"
  | "failed"
  | "stopped"
  | "destroying"
  | "destroy_failed";

export interface InternRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  name: string;
  description: string;
  instructions: string;
  model: string;
  status: InternStatusName;
  hostname: string | null;
  vaultId: string | null;
  /** Hash of the key that created it: its creator's membership decides 403 on chat. */
  creatorKeyHash: string;
  createdAt: Date;
  updatedAt: Date;
}
