import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  ProviderKeySchema,
  ProviderKeyState,
  ProviderSchema,
  type Provider,
} from "../../../gen/gateway/v1/models_pb.js";
import type { CatalogProvider } from "../../engine/catalog/catalog.js";
import type { KeyHealth, KeyState } from "../../engine/key-pools/key-pool.js";
import { poolStatus } from "./pool-status.js";

const STATES: Record<KeyState, ProviderKeyState> = {
  healthy: ProviderKeyState.HEALTHY,
  cooling: ProviderKeyState.COOLING,
  refused: ProviderKeyState.REFUSED,
};

/**
 * A catalog provider as GET /providers shows it: its pool's status, and to a management key its
 * keys by position and state (never a key). Which key of the gateway's is resting or refused, and
 * until when, is the operator's business, not every tenant's.
 */
export function toProvider(
  provider: CatalogProvider,
  keys: readonly KeyHealth[] | undefined,
  showKeys: boolean,
): Provider {
  return create(ProviderSchema, {
    name: provider.name,
    slug: provider.slug,
    svcKind: provider.kind,
    svcStatus: poolStatus(keys),
    svcKeys: (showKeys ? (keys ?? []) : []).map((key) =>
      create(ProviderKeySchema, {
        label: key.label,
        weight: key.weight,
        state: STATES[key.state],
        coolingUntil: key.coolingUntil === undefined ? undefined : timestampFromMs(key.coolingUntil),
      }),
    ),
  });
}
