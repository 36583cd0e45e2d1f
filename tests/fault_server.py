"""A small OpenAI-compatible HTTP server on 127.0.0.1 that injects faults, for the HTTP client's tests.

Every request takes the next fault from `plan` (first in, first out); with the plan empty it answers normally.
Faults: ("429", retry_after_seconds), ("status", code), ("sleep", seconds) (then answers normally, after the
client has given up), ("malformed",) (HTTP 200, a body that is not JSON), ("echo_auth", pad) (HTTP 400 whose
body quotes the Authorization header after `pad` filler characters, as a careless proxy might), ("echo_auth_pieces",)
(HTTP 401 quoting the header less its last character, and its last 12 characters), ("redirect", url) (HTTP 307 to
`url`). Normal answers:
- /v1/chat/completions with `logprobs`: one token "up" with a fixed top-4 of candidates (CANDIDATES);
- /v1/chat/completions with `n`: n answers cycling through SAMPLED;
- with `no_logprobs = True`: answers without log-probs, as an endpoint that does not return them.
With `varied = True` the answers depend on the request's messages (a deterministic stand-in for a model, for
whole-pipeline runs): "up" or "down" by a hash of the messages, and sampled answers drawn with the request's
`seed` from a distribution that also depends on the messages.
/version is 404: the client must treat this server as a generic (non-vLLM) OpenAI-compatible server -- except with
`scoring` set ("stable" or "order_dependent"): then /version answers as vLLM's does and /v1/completions with echo
scores each word of the prompt (a log-prob by a hash of the word; "order_dependent" subtracts 1e-3 when the prompt
was scored before, a prefix-cache hit, as vLLM's prefix cache moves prompt log-probs, vllm-project/vllm#42019).
`requests` records (path, payload, Authorization header); `max_in_flight` the peak of concurrent requests.
`delay` adds seconds to every normal answer.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CANDIDATES = [("up", 0.6), ("down", 0.2), (" up", 0.1), ("unknown", 0.05)]
SAMPLED = ["up"] * 3 + ["down", "Unknown"]


class FaultServer:
    def __init__(self):
        self.plan: list[tuple] = []
        self.requests: list[tuple[str, dict, str]] = []
        self.no_logprobs = False
        self.varied = False
        self.delay = 0.0
        self.scoring: str | None = None
        self._scored_prompts: set[str] = set()
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        state = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                state.handle(self)

            def do_POST(self):
                state.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, path: str) -> int:
        return sum(1 for p, _, _ in self.requests if p == path)

    # ---- request handling ----------------------------------------------------------------------------------
    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        payload = json.loads(handler.rfile.read(length) or b"{}")
        auth = handler.headers.get("Authorization", "")
        with self._lock:
            self.requests.append((handler.path, payload, auth))
            fault = self.plan.pop(0) if self.plan and handler.path != "/version" else None
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            self._answer(handler, payload, auth, fault)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self._in_flight -= 1

    def _send(self, handler, status: int, body: bytes, headers: dict | None = None) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)

    def _answer(self, handler, payload: dict, auth: str, fault: tuple | None) -> None:
        if handler.path == "/version":
            if self.scoring:
                return self._send(handler, 200, b'{"version": "0.0.0+fault-server"}')
            return self._send(handler, 404, b'{"detail": "Not Found"}')
        if self.scoring and handler.path == "/v1/completions":
            return self._send(handler, 200, json.dumps(self._scored(payload)).encode())
        if fault is not None:
            kind = fault[0]
            if kind == "429":
                return self._send(handler, 429, b'{"error": "rate limited"}', {"Retry-After": str(fault[1])})
            if kind == "status":
                return self._send(handler, fault[1], b'{"error": "server error"}')
            if kind == "malformed":
                return self._send(handler, 200, b'{"choices": [{"message": ')
            if kind == "echo_auth":
                pad = "x" * (fault[1] if len(fault) > 1 else 0)
                return self._send(handler, 400,
                                  json.dumps({"error": f"{pad}bad request, header was {auth}"}).encode())
            if kind == "echo_auth_pieces":  # the key less its last character, and its last 12 characters
                return self._send(handler, 401, json.dumps({"error": f"invalid token {auth[:-1]}...; "
                                                                     f"token ending {auth[-12:]}"}).encode())
            if kind == "redirect":
                return self._send(handler, 307, b"{}", {"Location": fault[1]})
            if kind == "sleep":
                time.sleep(fault[1])
        time.sleep(self.delay)
        if handler.path != "/v1/chat/completions":
            return self._send(handler, 404, b'{"detail": "Not Found"}')
        self._send(handler, 200, json.dumps(self._completion(payload)).encode())

    def _scored(self, payload: dict) -> dict:
        """An echo completion: the prompt's words as its tokens, the first without a log-prob."""
        prompt = str(payload.get("prompt", ""))
        words = prompt.split() or [""]
        with self._lock:
            hit, _ = prompt in self._scored_prompts, self._scored_prompts.add(prompt)
        shift = 1e-3 if self.scoring == "order_dependent" and hit else 0.0
        values = [None] + [-(1 + int(hashlib.sha256(w.encode()).hexdigest(), 16) % 5) / 2 - shift for w in words[1:]]
        return {"choices": [{"text": "", "logprobs": {"tokens": words, "token_logprobs": values}}],
                "usage": {"prompt_tokens": len(words)}}

    @staticmethod
    def _distribution(payload: dict) -> list[tuple[str, float]]:
        """For `varied`: P(up) in [0.1, 0.7] and P(down) in [0.1, 0.25] by a hash of the messages."""
        h = int(hashlib.sha256(json.dumps(payload.get("messages"), sort_keys=True).encode()).hexdigest(), 16)
        p_up, p_down = 0.1 + 0.6 * (h % 1000) / 1000, 0.1 + 0.15 * (h // 1000 % 1000) / 1000
        return sorted([("up", p_up), ("down", p_down), ("unknown", 1 - p_up - p_down)], key=lambda c: -c[1])

    def _completion(self, payload: dict) -> dict:
        n = int(payload.get("n", 1))
        candidates = self._distribution(payload) if self.varied else CANDIDATES
        if n > 1:
            if self.varied:
                draw = random.Random(f"{payload.get('seed')}|{json.dumps(payload.get('messages'))}")
                answers = draw.choices([t for t, _ in candidates], [p for _, p in candidates], k=n)
            else:
                answers = [SAMPLED[i % len(SAMPLED)] for i in range(n)]
            choices = [{"index": i, "message": {"role": "assistant", "content": answer}, "logprobs": None}
                       for i, answer in enumerate(answers)]
            return {"object": "chat.completion", "choices": choices}
        answer, p_answer = max(((t, q) for t, q in candidates if t in ("up", "down")), key=lambda c: c[1])
        logprobs = None
        if payload.get("logprobs") and not self.no_logprobs:
            top = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
                   for t, p in candidates[:payload.get("top_logprobs", 20)]]
            logprobs = {"content": [{"token": answer, "logprob": math.log(p_answer), "bytes": list(answer.encode()),
                                     "top_logprobs": top}]}
        return {"object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "logprobs": logprobs}]}
