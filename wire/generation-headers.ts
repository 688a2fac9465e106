/**
 * The generation id of a call whose answer keeps the provider's own id (a Responses answer an
 * endpoint gave natively: `previous_response_id` names the provider's id), so that the call can
 * still be found in GET /generation and the activity.
 */
export const GENERATION_ID_HEADER = "x-gateway-generation-id";
