import { useEffect, useRef, useState } from "preact/hooks";
import { messageOf, postForStream } from "../api.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Panel } from "../components/panel.js";
import { CloseButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { sseData } from "../sse.js";
import type { Intern, InternChatChunk, InternQuestion, InternToolCall } from "../types.js";

/**
 * A chat with a running intern (POST /interns/{id}/chat/completions): each answer is
 * rendered as its SSE chunks arrive. When the intern asks (a `svc.provide_input` tool call, then
 * `finish_reason` `tool_calls` and the final chunk with the `session_id`), the question is shown
 * with a button per offered option; the answer is a second request with that `session_id`, the
 * assistant message echoing the tool call and a tool message carrying the option, and its stream
 * continues the run. Closing the pane or "Stop" while an answer streams cancels the run.
 */
type Entry = { role: "user" | "assistant" | "answer" | "note"; text: string };

interface Pending {
  call: InternToolCall;
  question: InternQuestion | undefined;
}

const OPTION_TEXT: Record<string, string> = {
  allow_once: "Allow once",
  allow_always: "Allow always",
  reject_once: "Reject once",
  reject_always: "Reject always",
};

export function InternChat({ intern, onClose }: { intern: Intern; onClose: () => void }) {
  const [log, setLog] = useState<Entry[]>([]);
  const [sessionId, setSessionId] = useState<string | undefined>();
  const [pending, setPending] = useState<Pending | undefined>();
  const [streaming, setStreaming] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [manual, setManual] = useState(true);
  const [draft, setDraft] = useState("");
  const inFlight = useRef<AbortController | undefined>();
  useEffect(() => () => inFlight.current?.abort(), []);

  const append = (entry: Entry) => setLog((entries) => [...entries, entry]);
  /** Text of the answer streaming in: the first piece opens its entry, the next ones extend it. */
  const appendText = (text: string, first: boolean) =>
    setLog((entries) => {
      const last = entries[entries.length - 1];
      return !first && last?.role === "assistant"
        ? [...entries.slice(0, -1), { ...last, text: last.text + text }]
        : [...entries, { role: "assistant", text }];
    });

  /** One request and its stream, read to the end (`[DONE]`): the text, a question, the session. */
  const exchange = async (body: Record<string, unknown>) => {
    const controller = new AbortController();
    inFlight.current = controller;
    setStreaming(true);
    setError(undefined);
    try {
      const answer = await postForStream(
        `/interns/${intern.id}/chat/completions`,
        { stream: true, ...body },
        controller.signal,
      );
      if ("json" in answer) {
        // A prompt to a run that is still going (or paused) is delivered into it: no stream.
        append({ role: "note", text: `Delivered to the conversation in progress (${statusOf(answer.json)}).` });
        return;
      }
      let first = true;
      for await (const payload of sseData(answer.stream)) {
        const chunk = payload as InternChatChunk;
        if (chunk.error) setError(chunk.error.message);
        for (const choice of chunk.choices ?? []) {
          const content = choice.delta?.content;
          if (content) {
            appendText(content, first);
            first = false;
          }
          const call = choice.delta?.tool_calls?.[0];
          if (call?.function)
            setPending({
              call: { id: call.id, function: call.function },
              question: parseQuestion(call.function.arguments),
            });
        }
        if (chunk.session_id) setSessionId(chunk.session_id);
      }
    } catch (err) {
      if (!controller.signal.aborted) setError(messageOf(err));
      else append({ role: "note", text: "Stopped." });
    } finally {
      if (inFlight.current === controller) inFlight.current = undefined;
      setStreaming(false);
    }
  };

  const sendPrompt = (event: Event) => {
    event.preventDefault();
    const prompt = draft.trim();
    if (!prompt || streaming) return;
    setDraft("");
    append({ role: "user", text: prompt });
    // `approval_mode` belongs to the run a prompt starts: sent with every prompt.
    void exchange({
      messages: [{ role: "user", content: prompt }],
      ...(sessionId ? { session_id: sessionId } : {}),
      ...(manual ? { approval_mode: "manual" } : {}),
    });
  };

  const answer = (option: string) => {
    if (!pending || !sessionId || streaming) return;
    const { call } = pending;
    setPending(undefined);
    append({ role: "answer", text: OPTION_TEXT[option] ?? option });
    void exchange({
      session_id: sessionId,
      messages: [
        { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: call.function }] },
        { role: "tool", tool_call_id: call.id, content: option },
      ],
    });
  };

  return (
    <Panel
      title={`Chat with ${intern.name}`}
      takeFocus
      actions={<CloseButton accessibleLabel={`Close the chat with ${intern.name}`} onClose={onClose} />}
    >
      <ol class="chat-log" role="log" aria-label={`Conversation with ${intern.name}`} aria-busy={streaming}>
        {log.length === 0 ? <li class="hint">No messages yet.</li> : null}
        {log.map((entry, i) => (
          <li key={i} class={`chat-${entry.role}`}>
            {entry.role === "answer" ? (
              "You answered: "
            ) : (
              <span class="visually-hidden">{ROLE_TEXT[entry.role]}: </span>
            )}
            {entry.text}
          </li>
        ))}
      </ol>
      <ErrorBanner error={error} context="The intern did not answer" onDismiss={() => setError(undefined)} />
      {pending && !streaming ? (
        <Question intern={intern} pending={pending} ready={sessionId !== undefined} onAnswer={answer} />
      ) : null}
      {streaming ? (
        <div class="chat-streaming">
          <Progress label={`${intern.name} is answering`} />
          <button type="button" onClick={() => inFlight.current?.abort()}>
            Stop
          </button>
        </div>
      ) : null}
      <form class="chat-form" onSubmit={sendPrompt}>
        <label class="wide">
          Message to {intern.name}
          <textarea
            rows={2}
            value={draft}
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={(e) => {
              // Enter sends, Shift+Enter starts a new line.
              if (e.key === "Enter" && !e.shiftKey) sendPrompt(e);
            }}
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={manual} onChange={(e) => setManual(e.currentTarget.checked)} />
          Ask me before running commands
        </label>
        <div class="form-actions">
          <button type="submit" disabled={streaming || draft.trim() === ""}>
            Send
          </button>
          <button
            type="button"
            disabled={streaming || sessionId === undefined}
            onClick={() => {
              setSessionId(undefined);
              setPending(undefined);
              setLog([]);
            }}
          >
            New conversation
          </button>
        </div>
      </form>
    </Panel>
  );
}

/** Who said it, for screen readers (the bubbles' placement says it to the eye); answers say it to all. */
const ROLE_TEXT: Record<Entry["role"], string> = {
  user: "You",
  assistant: "Intern",
  answer: "You answered",
  note: "Note",
};

/** The intern's question, its options as buttons (the first takes the focus); free text when it offers none. */
function Question({
  intern,
  pending,
  ready,
  onAnswer,
}: {
  intern: Intern;
  pending: Pending;
  ready: boolean;
  onAnswer: (option: string) => void;
}) {
  const first = useRef<HTMLButtonElement>(null);
  const [text, setText] = useState("");
  useEffect(() => first.current?.focus(), [pending.call.id]);
  const { question } = pending;
  const options = question?.options ?? [];
  return (
    <section aria-labelledby="question-heading" class="question">
      <h3 id="question-heading">{intern.name} asks</h3>
      {question?.kind === "permission" ? (
        <>
          <p>
            Permission to use the {question.operation}
            {question.command ? ":" : "."}
          </p>
          {question.command ? (
            <pre class="command">
              <code>{question.command}</code>
            </pre>
          ) : null}
          <p class="hint">"Always" holds for the rest of this run.</p>
        </>
      ) : question?.kind === "question" ? (
        <p>{question.question}</p>
      ) : (
        <pre class="command">
          <code>{pending.call.function.arguments}</code>
        </pre>
      )}
      <div class="actions">
        {options.map((option, i) => (
          <button
            type="button"
            ref={i === 0 ? first : undefined}
            class={option.startsWith("reject") ? "danger" : undefined}
            disabled={!ready}
            onClick={() => onAnswer(option)}
          >
            {OPTION_TEXT[option] ?? option}
          </button>
        ))}
      </div>
      {options.length === 0 ? (
        <form
          class="chat-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) onAnswer(text.trim());
          }}
        >
          <label class="wide">
            Your answer
            <input value={text} onInput={(e) => setText(e.currentTarget.value)} autocomplete="off" />
          </label>
          <div class="form-actions">
            <button type="submit" disabled={!ready || text.trim() === ""}>
              Send answer
            </button>
          </div>
        </form>
      ) : null}
    </section>
  );
}

/** The question in a tool call's `arguments` (a JSON string); undefined when it is not one we know. */
function parseQuestion(args: string): InternQuestion | undefined {
  try {
    const parsed = JSON.parse(args) as Partial<InternQuestion> | null;
    if (parsed?.kind === "permission" && Array.isArray(parsed.options)) return parsed as InternQuestion;
    if (parsed?.kind === "question" && typeof parsed.question === "string") return parsed as InternQuestion;
  } catch {
    // Shown as it came.
  }
  return undefined;
}

function statusOf(json: unknown): string {
  return typeof json === "object" && json !== null && "status" in json
    ? String((json as { status: unknown }).status)
    : "accepted";
}
