#!/usr/bin/env python3
"""The gateway from Python over gRPC, with the client that examples/python/buf.gen.yaml generates
(docs/operating.md, "Clients in other languages"):

1. KeysService.GetCurrentKey (REST: GET /api/v1/key): which key this is and what it has spent;
2. InferenceService.CreateChatCompletion with stream=true (REST: POST /api/v1/chat/completions):
   each delta printed as it arrives, then the token usage.

    GATEWAY_KEY=sk-gw-v1-... python3 examples/python/client.py --model openai/gpt-4o-mini "Say hello"

Needs grpcio and protobuf (Debian: python3-grpcio, python3-protobuf).
"""

import argparse
import os
import sys
from pathlib import Path

# Where `npx buf generate --template examples/python/buf.gen.yaml` writes; PYTHONPATH may point elsewhere.
sys.path.insert(0, str(Path(__file__).resolve().parent / "gen"))

import grpc  # noqa: E402
from google.protobuf import struct_pb2  # noqa: E402

from gateway.v1 import inference_pb2, inference_pb2_grpc, keys_pb2, keys_pb2_grpc  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prompt", nargs="?", default="Say hello in five words.")
    parser.add_argument("--target", default=os.environ.get("GATEWAY_GRPC_TARGET", "127.0.0.1:50051"), help="host:port of GRPC_PORT")
    parser.add_argument("--model", default="", help="model slug; empty: the account's default model")
    args = parser.parse_args()
    key = os.environ.get("GATEWAY_KEY")
    if not key:
        print("set GATEWAY_KEY to an API key of the gateway", file=sys.stderr)
        return 2
    # The key travels as gRPC metadata, as the Authorization header does over REST.
    metadata = [("authorization", f"Bearer {key}")]

    with grpc.insecure_channel(args.target) as channel:
        try:
            current = keys_pb2_grpc.KeysServiceStub(channel).GetCurrentKey(keys_pb2.GetCurrentKeyRequest(), metadata=metadata, timeout=10).data
            limit = f"${current.limit:.2f}" if current.HasField("limit") else "none"
            print(f"key: {current.label} (usage ${current.usage:.6f}, limit {limit})")

            request = inference_pb2.ChatCompletionRequest(
                model=args.model,
                messages=[inference_pb2.ChatMessage(role=inference_pb2.CHAT_ROLE_USER, content=struct_pb2.Value(string_value=args.prompt))],
                stream=True,
                stream_options=inference_pb2.ChatStreamOptions(include_usage=True),
            )
            usage = None
            for event in inference_pb2_grpc.InferenceServiceStub(channel).CreateChatCompletion(request, metadata=metadata, timeout=120):
                chunk = event.chunk
                for choice in chunk.choices:
                    if choice.delta.HasField("content"):
                        print(choice.delta.content, end="", flush=True)
                if chunk.HasField("error"):
                    # The stream had begun when the upstream failed: the error comes as a last chunk.
                    print(f"\nstream ended with an error: {chunk.error.code} {chunk.error.message}", file=sys.stderr)
                    return 1
                if chunk.HasField("usage"):
                    usage = chunk.usage
            print()
            if usage is not None:
                print(f"tokens: {usage.prompt_tokens} in, {usage.completion_tokens} out; cost ${usage.cost:.6f}")
        except grpc.RpcError as err:
            # The gateway's gateway.v1.ErrorDetail (HTTP status, reason) rides in grpc-status-details-bin.
            print(f"\n{err.code().name}: {err.details()}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
