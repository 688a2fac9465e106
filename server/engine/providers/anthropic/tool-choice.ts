/**
 * Chat's string `tool_choice` values and Anthropic's `tool_choice.type`, one table read both ways
 * (chat-request.ts upstream, the Messages format for clients). Naming one tool is a shape of its
 * own on each side (`{function: {name}}` / `{type: "tool", name}`), so it is not in the table.
 *
 * @module
 */

const ANTHROPIC_TYPE_OF_CHAT_CHOICE: Readonly<Record<string, string>> = {
  auto: "auto",
  none: "none",
  required: "any",
};

const CHAT_CHOICE_OF_ANTHROPIC_TYPE: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(ANTHROPIC_TYPE_OF_CHAT_CHOICE).map(([chat, anthropic]) => [anthropic, chat]),
);

/** Undefined for anything but auto, none and required. */
export function anthropicToolChoiceType(chatChoice: string): string | undefined {
  return Object.hasOwn(ANTHROPIC_TYPE_OF_CHAT_CHOICE, chatChoice)
    ? ANTHROPIC_TYPE_OF_CHAT_CHOICE[chatChoice]
    : undefined;
}

/** Undefined for anything but auto, none and any. */
export function chatToolChoice(anthropicType: string): string | undefined {
  return Object.hasOwn(CHAT_CHOICE_OF_ANTHROPIC_TYPE, anthropicType)
    ? CHAT_CHOICE_OF_ANTHROPIC_TYPE[anthropicType]
    : undefined;
}
