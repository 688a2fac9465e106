import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ProviderKeySchema, ProviderKeyState, ProviderSchema, type Provider } from "../../../gen/gateway/v1/models_pb.js";
import type { CatalogProvider } from "../../engine/catalog/catalog.js";
import type { KeyHealth, KeyState } from "../../engine/key-pools/key-pool.js";

const STATES: Record<KeyState, ProviderKeyState> = {
  healthy: ProviderKeyState.HEALTHY,
  cooling: ProviderKeyState.COOLING,
  refused: ProviderKeyState.REFUSED,
};

/** A catalog provider as GET /providers shows it: its pool's keys by position and state, never a key. */
export function toProvider(provider: CatalogProvider, keys: readonly KeyHealth[] = []): Provider {
  return create(ProviderSchema, {
    name: provider.name,
    slug: provider.slug,
    svcKind: provider.kind,
    svcKeys: keys.map((key) =>
      create(ProviderKeySchema, {
        label: key.label,
        weight: key.weight,
        state: STATES[key.state],
        coolingUntil: key.coolingUntil === undefined ? undefined : timestampFromMs(key.coolingUntil),
      }),
    ),
  });
}
