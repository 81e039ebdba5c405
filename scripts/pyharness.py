#!/usr/bin/env python3
"""A Python streaming load client of the kind people benchmark with: asyncio,
httpx.AsyncClient, response lines through aiter_lines and json.loads on every
data line. It exists to measure what such a client costs in CPU per token
beside kovara-bench on the same server and load (docs/performance.md).

    python3 scripts/pyharness.py --url http://127.0.0.1:8080 --model M \
        --concurrency 8 --requests 256 --output-tokens 256

It prints one JSON line: requests done and failed, output tokens (from the
server's usage), and wall time. Measure its CPU with /usr/bin/time.
Needs Debian's python3-httpx.
"""

import argparse
import asyncio
import json
import sys
import time

import httpx


async def one(client, args, n, totals):
    body = {
        "model": args.model,
        "messages": [{"role": "user", "content": f"Request {n}: " + "word " * args.input_words}],
        "max_tokens": args.output_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
    }
    # llama-server closes the connection after each streamed answer; a
    # request that meets the closed connection is sent once more.
    for attempt in range(2):
        start = time.perf_counter()
        ttft = None
        chunks = 0
        usage_out = 0
        try:
            async with client.stream("POST", "/v1/chat/completions", json=body) as resp:
                if resp.status_code != 200:
                    await resp.aread()
                    totals["failed"] += 1
                    return
                async for line in resp.aiter_lines():
                    if not line.startswith("data: "):
                        continue
                    data = line[6:]
                    if data == "[DONE]":
                        break
                    try:
                        chunk = json.loads(data)
                    except json.JSONDecodeError:
                        continue
                    usage = chunk.get("usage")
                    if usage:
                        usage_out = usage.get("completion_tokens", 0)
                    for choice in chunk.get("choices") or []:
                        delta = choice.get("delta") or {}
                        if delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning"):
                            if ttft is None:
                                ttft = time.perf_counter() - start
                            chunks += 1
            totals["done"] += 1
            totals["tokens"] += usage_out or chunks
            return
        except (httpx.RemoteProtocolError, httpx.ReadError):
            if attempt == 1:
                totals["failed"] += 1


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--requests", type=int, default=256)
    p.add_argument("--output-tokens", type=int, default=256)
    p.add_argument("--input-words", type=int, default=64)
    args = p.parse_args()

    totals = {"done": 0, "failed": 0, "tokens": 0}
    limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
    async with httpx.AsyncClient(base_url=args.url, timeout=300, limits=limits) as client:
        next_n = iter(range(args.requests))

        async def worker():
            for n in next_n:
                await one(client, args, n, totals)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        totals["wall_s"] = round(time.perf_counter() - start, 3)
    json.dump(totals, sys.stdout)
    print()


if __name__ == "__main__":
    asyncio.run(main())
