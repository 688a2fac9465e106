import { SKU_PER_SECOND, SKU_PER_VIDEO, addUsd, multiplyUsd } from "../../engine/index.js";
import type { CatalogVideoModel } from "../../engine/catalog/video-models.js";

/**
 * What a video job costs, from the model's `pricing_skus`: `per-video` once, plus every second
 * at `per-video-second-<resolution>` when the model prices that resolution, else at
 * `per-video-second`. The same formula gives the estimate reserved at submission (the requested
 * seconds) and the billed cost (the seconds the provider reports, when it does).
 */
export function videoCost(model: CatalogVideoModel, seconds: number, resolution: string | null): string {
  const perSecond =
    (resolution !== null ? model.pricingSkus.get(`${SKU_PER_SECOND}-${resolution.toLowerCase()}`) : undefined) ??
    model.pricingSkus.get(SKU_PER_SECOND) ??
    "0";
  return addUsd(model.pricingSkus.get(SKU_PER_VIDEO) ?? "0", multiplyUsd(perSecond, seconds));
}
