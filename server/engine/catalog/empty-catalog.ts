/**
 * A gateway without models answers every inference call with an error; a fresh install that has
 * not been given GATEWAY_CONFIG is the usual cause, so both the start-up warning and the error say
 * what to set, with the runnable example the README starts from.
 *
 * @module
 */

const HOW_TO =
  "set GATEWAY_CONFIG to a JSON or YAML catalog of providers and models, e.g. GATEWAY_CONFIG=examples/gateway.yaml";

export function emptyCatalogWarning(file: string | undefined): string {
  return file === undefined
    ? `GATEWAY_CONFIG is not set: the model catalog is empty and every inference call will fail; ${HOW_TO}`
    : `GATEWAY_CONFIG ${file} lists no models: every inference call will fail`;
}

/** The message of an inference call naming a model that an empty catalog cannot have. */
export function noModelsConfigured(requested: string): string {
  return `${requested} is not a valid model ID: no models are configured on this gateway (${HOW_TO})`;
}
