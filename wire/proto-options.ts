/**
 * Custom options read once per descriptor. `getOption` decodes the descriptor's options on every
 * call, and the validation, wire-JSON and auth paths ask for the same options of the same
 * descriptors on every request; descriptors never change, so each answer is kept. The element is
 * typed loosely because protobuf-es does not export its element/extension pairing type; getOption
 * still checks the pairing at run time.
 *
 * @module
 */
import { getOption, hasOption, type AnyDesc, type DescExtension, type ExtensionValueShape } from "@bufbuild/protobuf";

const values = new WeakMap<DescExtension, WeakMap<AnyDesc, unknown>>();
const presence = new WeakMap<DescExtension, WeakMap<AnyDesc, boolean>>();

/** getOption, remembered: the option's value, or its default when unset. */
export function optionOf<Ext extends DescExtension>(element: AnyDesc, extension: Ext): ExtensionValueShape<Ext> {
  const known = remembered(values, extension);
  if (!known.has(element)) known.set(element, getOption(element as never, extension));
  return known.get(element) as ExtensionValueShape<Ext>;
}

/** The option's value where it is set, else undefined (for message-typed options). */
export function setOptionOf<Ext extends DescExtension>(
  element: AnyDesc,
  extension: Ext,
): ExtensionValueShape<Ext> | undefined {
  const known = remembered(presence, extension);
  let isSet = known.get(element);
  if (isSet === undefined) known.set(element, (isSet = hasOption(element as never, extension)));
  return isSet ? optionOf(element, extension) : undefined;
}

function remembered<V>(
  cache: WeakMap<DescExtension, WeakMap<AnyDesc, V>>,
  extension: DescExtension,
): WeakMap<AnyDesc, V> {
  let map = cache.get(extension);
  if (!map) cache.set(extension, (map = new WeakMap()));
  return map;
}
