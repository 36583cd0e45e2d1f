"""OpenAI-compatible HTTP backend (vLLM's OpenAI server, hosted APIs): the three operations over HTTP.

- greedy generation and the answer position's top-k: POST /chat/completions with temperature 0, `logprobs`
  and `top_logprobs` (the server applies the model's chat template);
- prompt-token log-probs (Min-K%): POST /completions with `echo`, `logprobs: 1`, `max_tokens: 1` on raw text
  (no template); with the next-token moments (Min-K%++, Gap-K%), `logprobs: 20`, the moments taken from those
  candidates (llm/moments.py). Only a vLLM server is trusted to do this; hosted APIs do not return prompt log-probs, so
  Min-K% stops there with a ModelError (use the recall LAP);
- label tokenization: vLLM's /tokenize; else the local tokenizer named by `[model] tokenizer` (the same
  model's); else a ModelError, because the protocol forbids assuming labels are single tokens.

A vLLM server is recognised by its /version endpoint. To it the backend sends vLLM's
`return_tokens_as_token_ids`, so candidates carry exact token ids, and decodes each id once through
/detokenize (as `tokenizer.decode([id])`, like the local backends). Other servers give token strings only:
the candidates get placeholder ids −1, −2, … by rank, distinct within a list, which is all the protocol's
"deduplicate by token id" needs there.

Retries: requests + urllib3's `Retry` (no hand-written loop): up to `max_retries` retries on connection
errors, timeouts, 429 and 5xx, with exponential backoff (`backoff_factor` · 2^(n−1), at most `backoff_max`
seconds) and the server's Retry-After honoured on 429/503, capped at `backoff_max` as well. A 200 whose body
is not JSON is retried with the same backoff (urllib3 does not read bodies, so this one loop is ours); after
the retries every failure stops the run loudly, and the answers asked so far are already in the cache.
`concurrency` requests are in flight per server.

The API key is read from the environment variable named by `[model] api_key_env` and sent only as the
Authorization header: it is never stored in the cache, `describe()`, logs, or error messages (server replies
quoted in errors are scrubbed of it).
"""

from __future__ import annotations

import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from ..config import check_key_variable
from ..errors import ConfigError, LogprobsUnavailable, ModelError, PromptLogprobsUnavailable
from . import bundled, moments
from .base import Chat, Generation, PromptScore, TokenLogprob
from .router import ServerPool, check_urls

RETRY_STATUSES = (429, 500, 502, 503, 504)
CONNECT_TIMEOUT = 10.0
TOKEN_ID_PREFIX = "token_id:"
SCRUB_RUN = 8
"""Any run of this many characters of the API key is masked in a message (a whole key shorter than this is masked)."""
# A vLLM server fills every sampling field a request leaves out from the model's generation_config.json
# (top_k, min_p, repetition_penalty, ...) unless it was started with `--generation-config vllm`; these values
# are the neutral ones, so greedy answers and sampled frequencies match the offline backends on any server.
VLLM_NEUTRAL_SAMPLING = {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0}


class OpenAIBackend:
    """Queries spread over `base_urls` (router.ServerPool); `model_id` is the cache identity, `served_model_name`
    (default: model_id) the name sent in requests."""

    name = "openai"

    def __init__(self, model_id: str, base_urls: Sequence[str], *, served_model_name: str = "",
                 api_key_env: str = "", allow_external: bool = False, tokenizer: str = "",
                 concurrency: int = 8, request_timeout: float = 120.0, max_retries: int = 5,
                 backoff_factor: float = 1.0, backoff_max: float = 60.0):
        self.model_id = model_id
        self.served_model_name = served_model_name or model_id
        self.pool = ServerPool(check_urls(base_urls, allow_external))
        self.api_key_env = api_key_env
        self._api_key = self._read_key(api_key_env)
        self.tokenizer_name = tokenizer
        self.concurrency = max(1, int(concurrency))
        self.request_timeout = float(request_timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff_factor, self.backoff_max = float(backoff_factor), float(backoff_max)
        self._retry = Retry(
            total=self.max_retries, connect=self.max_retries, read=self.max_retries, status=self.max_retries,
            other=0, allowed_methods=None, status_forcelist=RETRY_STATUSES, backoff_factor=backoff_factor,
            backoff_max=backoff_max, retry_after_max=int(backoff_max), respect_retry_after_header=True,
            raise_on_status=False,
        )
        self._local = threading.local()
        self._lock = threading.Lock()
        self._is_vllm: dict[str, bool] = {}
        self._decoded: dict[int, str] = {}
        self._tokenizer = None

    @staticmethod
    def _read_key(api_key_env: str) -> str:
        if not api_key_env:
            return ""
        key = os.environ.get(check_key_variable(api_key_env), "")
        if not key:
            raise ConfigError(f"environment variable {api_key_env} (named by [model] api_key_env) is not set or "
                              "empty; export the API key there")
        return key

    # ---- transport -----------------------------------------------------------------------------------------
    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            adapter = HTTPAdapter(max_retries=self._retry, pool_connections=len(self.pool.urls),
                                  pool_maxsize=self.concurrency)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            if self._api_key:
                session.headers["Authorization"] = f"Bearer {self._api_key}"
            self._local.session = session
        return session

    def _scrub(self, text: str, limit: int) -> str:
        """The first `limit` characters of `text` with every run of SCRUB_RUN or more characters of the API key masked
        ("***"), not only the whole key: a server or proxy may quote the key less a character, or a piece of it. A
        key's worth of characters past the limit is scrubbed too, so that a key cut by the limit is masked."""
        if not self._api_key:
            return text[:limit]
        text = text[:limit + len(self._api_key)]
        run = min(SCRUB_RUN, len(self._api_key))
        pieces = {self._api_key[i:i + run] for i in range(len(self._api_key) - run + 1)}
        masked = [False] * len(text)
        for i in range(len(text) - run + 1):
            if text[i:i + run] in pieces:
                masked[i:i + run] = [True] * run
        out, i = [], 0
        while i < len(text):
            if masked[i]:
                out.append("***")
                while i < len(text) and masked[i]:
                    i += 1
            else:
                out.append(text[i])
                i += 1
        return "".join(out)[:limit]

    def _request(self, method: str, url: str, payload: dict | None = None,
                 accept: tuple[int, ...] = (200,)) -> tuple[int, Any]:
        """(status, parsed JSON) after the retries; ModelError when no usable answer came.

        Connection errors, timeouts, 429 and 5xx are retried by urllib3 (see the module docstring). A 200 whose
        body is not JSON (a truncated body from a proxy, a crashed worker) is retried here with the same
        backoff, because urllib3 never reads bodies; after `max_retries` such answers the run stops."""
        for attempt in range(self.max_retries + 1):
            try:
                # No redirects: a 3xx from a local server or proxy could forward the texts to another host
                # without `allow_external`.
                response = self._session().request(method, url, json=payload, allow_redirects=False,
                                                   timeout=(CONNECT_TIMEOUT, self.request_timeout))
            except requests.RequestException as err:
                reason = self._scrub(str(err).splitlines()[0] if str(err) else type(err).__name__, 300)
                raise ModelError(f"{url}: no answer after {self.max_retries} retries "
                                 f"(timeout {self.request_timeout:g} s per try): {reason}") from None
            if response.status_code not in accept:
                raise ModelError(f"{url}: HTTP {response.status_code} after up to {self.max_retries} retries: "
                                 f"{self._scrub(response.text, 300)!r}")
            if response.status_code != 200:
                return response.status_code, None
            try:
                return 200, response.json()
            except ValueError:
                body = self._scrub(response.text, 120)
                if attempt < self.max_retries:
                    time.sleep(min(self.backoff_max, self.backoff_factor * 2 ** attempt))
        raise ModelError(f"{url}: HTTP 200 with a body that is not JSON ({body!r}) {self.max_retries + 1} times; "
                         "the server is not OpenAI-compatible or is failing")

    def _root(self, url: str) -> str:
        """vLLM's own endpoints (/version, /tokenize, /detokenize) sit beside /v1, not under it."""
        return url[:-3] if url.endswith("/v1") else url

    def _vllm(self, url: str) -> bool:
        if url not in self._is_vllm:
            status, body = self._request("GET", self._root(url) + "/version", accept=(200, 401, 403, 404, 405))
            self._is_vllm[url] = status == 200 and isinstance(body, dict) and "version" in body
        return self._is_vllm[url]

    def _map(self, call: Callable[[str, Any], Any], items: Sequence[Any]) -> list[Any]:
        """call(base_url, item) for every item, `concurrency` per server in flight, results in input order."""
        def one(item: Any) -> Any:
            with self.pool.server() as url:
                return call(url, item)

        if not items:
            return []
        with ThreadPoolExecutor(max_workers=self.concurrency * len(self.pool.urls)) as executor:
            futures = [executor.submit(one, item) for item in items]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    # ---- tokens --------------------------------------------------------------------------------------------
    def _decode(self, url: str, token_id: int) -> str:
        with self._lock:
            if token_id in self._decoded:
                return self._decoded[token_id]
        _, body = self._request("POST", self._root(url) + "/detokenize",
                                {"model": self.served_model_name, "tokens": [token_id]})
        with self._lock:
            self._decoded[token_id] = body["prompt"]
        return body["prompt"]

    def _candidate(self, url: str, entry: dict, rank: int) -> TokenLogprob:
        token = str(entry["token"])
        if self._vllm(url) and token.startswith(TOKEN_ID_PREFIX):
            token_id = int(token[len(TOKEN_ID_PREFIX):])
            return TokenLogprob(token_id, self._decode(url, token_id), float(entry["logprob"]))
        return TokenLogprob(-1 - rank, token, float(entry["logprob"]))

    def _extensions(self, url: str) -> dict:
        return {"return_tokens_as_token_ids": True, **VLLM_NEUTRAL_SAMPLING} if self._vllm(url) else {}

    # ---- the three operations ------------------------------------------------------------------------------
    def _chat(self, url: str, messages: Chat, max_tokens: int, top_logprobs: int,
              require_logprobs: bool = True) -> tuple[str, list, list]:
        """(answer text, top-k at the answer position, the answer's per-token log-prob entries). Without log-probs
        in the answer: LogprobsUnavailable when `require_logprobs`, else ([], []) for the last two."""
        payload = {"model": self.served_model_name, "messages": messages, "temperature": 0,
                   "max_tokens": max_tokens, "logprobs": True, "top_logprobs": top_logprobs,
                   **self._extensions(url)}
        _, body = self._request("POST", url + "/chat/completions", payload)
        choice = body["choices"][0]
        text = choice["message"].get("content") or ""
        content = (choice.get("logprobs") or {}).get("content") or []
        if not content or not content[0].get("top_logprobs"):
            if not require_logprobs:
                return text, [], []
            raise LogprobsUnavailable(
                f"{url} answered model {self.served_model_name!r} without top_logprobs at the answer position; "
                "this endpoint does not return log-probs: use the sampling fallback ([recall] fallback = "
                "\"sampling\", protocol Step 2) or a server that does"
            )
        top = [self._candidate(url, e, rank) for rank, e in enumerate(content[0]["top_logprobs"][:top_logprobs])]
        return text, top, content

    def generate(self, chats: Sequence[Chat], max_new_tokens: int, top_logprobs: int = 20) -> list[Generation]:
        """Greedy answers with the log-prob of every generated token. The forecast needs only the text, so an
        endpoint without log-probs still answers: the tokens and the top-k are then empty (p_first missing).
        Without token ids (not a vLLM server), a generated token gets placeholder id −1 − position."""
        def call(url: str, messages: Chat) -> Generation:
            text, top, content = self._chat(url, messages, max_new_tokens, top_logprobs, require_logprobs=False)
            tokens = tuple(self._candidate(url, entry, position) for position, entry in enumerate(content))
            return Generation(text=text, tokens=tokens, first_top=tuple(top))

        return self._map(call, list(chats))

    def next_token_logprobs(self, chats: Sequence[Chat], top_logprobs: int = 20) -> list[list[TokenLogprob]]:
        return self._map(lambda url, messages: self._chat(url, messages, 1, top_logprobs)[1], list(chats))

    def prompt_scoring_unavailable(self) -> str:
        """Why Min-K% cannot be scored on these servers ("" when every one is a vLLM server, which can)."""
        for url in self.pool.urls:
            if not self._vllm(url):
                return (f"{url} is not a vLLM server: prompt-token log-probs (Min-K%) are read from /v1/completions "
                        "with echo, which hosted APIs do not support; Min-K% is unavailable on this backend, use the "
                        "recall LAP ([estimate] lap_measure = \"recall\") or a vLLM server")
        return ""

    def _echo(self, url: str, text: str, top: int) -> tuple[list[TokenLogprob], list]:
        """The prompt's tokens after the first with their log-probs, and each position's `top` candidates as the
        server returned them ({token: logprob}, the realised token added when outside; empty when none came)."""
        payload = {"model": self.served_model_name, "prompt": text, "echo": True, "logprobs": top,
                   "max_tokens": 1, "temperature": 0, **self._extensions(url)}
        _, body = self._request("POST", url + "/completions", payload)
        logprobs = body["choices"][0].get("logprobs") or {}
        n_prompt = int(body["usage"]["prompt_tokens"])
        tokens, values = logprobs.get("tokens") or [], logprobs.get("token_logprobs") or []
        if len(tokens) < n_prompt or len(values) < n_prompt:
            raise PromptLogprobsUnavailable(f"{url} returned no prompt-token log-probs for an echo request; "
                                            "Min-K% is unavailable on this server")
        candidates = list(logprobs.get("top_logprobs") or [])[:n_prompt]
        candidates = [dict(entry or {}) for entry in candidates + [{}] * (n_prompt - len(candidates))]
        for j, entry in enumerate(candidates):  # the realised token joins its position's candidates
            if entry and tokens[j] not in entry:
                entry[tokens[j]] = values[j]
        scored = [self._candidate(url, {"token": tokens[j], "logprob": values[j]}, j) for j in range(1, n_prompt)]
        return scored, candidates[1:]

    def prompt_logprobs(self, texts: Sequence[str]) -> list[list[TokenLogprob]]:
        unavailable = self.prompt_scoring_unavailable()
        if unavailable:
            raise PromptLogprobsUnavailable(unavailable)
        return self._map(lambda url, text: self._echo(url, text, 1)[0], list(texts))

    def prompt_scores(self, texts: Sequence[str]) -> list[PromptScore]:
        """`prompt_logprobs` with each position's MOMENT_TOP_K candidates (`logprobs: 20`, vLLM's default cap), the
        moments and top-1 taken from them and the realised token (llm/moments.py: the rest of the probability spread
        over the local tokenizer's vocabulary with `[model] tokenizer`, else renormalised); NaN where none came."""
        unavailable = self.prompt_scoring_unavailable()
        if unavailable:
            raise PromptLogprobsUnavailable(unavailable)

        vocabulary = len(self._local_tokenizer()) if self.tokenizer_name else 0

        def call(url: str, text: str) -> PromptScore:
            tokens, candidates = self._echo(url, text, moments.MOMENT_TOP_K)
            stats = tuple(moments.from_top(entry.values(), vocabulary) if entry else (math.nan, math.nan, math.nan)
                          for entry in candidates)
            return PromptScore(tokens=tuple(tokens), moments=stats, top_k=moments.MOMENT_TOP_K)

        return self._map(call, list(texts))

    def sample(self, chats: Sequence[Chat], n_samples: int, seed: int, temperature: float = 1.0,
               max_tokens: int = 1) -> list[list[str]]:
        """`n_samples` answers per chat at `temperature`, with a fixed `seed` (the sampling fallback,
        llm/sampling.py): one request per chat with `n` and `seed`, so a rerun gives the same answers on a
        server that honours the seed. top_p = 1 (and on a vLLM server top_k, min_p, repetition_penalty neutral):
        plain temperature sampling, whatever the server's defaults."""
        def call(url: str, messages: Chat) -> list[str]:
            payload = {"model": self.served_model_name, "messages": messages, "temperature": temperature,
                       "top_p": 1.0, "max_tokens": max_tokens, "n": n_samples, "seed": seed,
                       **(VLLM_NEUTRAL_SAMPLING if self._vllm(url) else {})}
            _, body = self._request("POST", url + "/chat/completions", payload)
            choices = sorted(body["choices"], key=lambda c: c.get("index", 0))
            if len(choices) != n_samples:
                raise ModelError(f"{url} returned {len(choices)} samples where {n_samples} were asked (`n`); "
                                 "the sampling fallback needs a server that supports n")
            return [c["message"].get("content") or "" for c in choices]

        return self._map(call, list(chats))

    def label_token_ids(self, label: str) -> list[int]:
        url = self.pool.urls[0]
        if self._vllm(url):
            _, body = self._request("POST", self._root(url) + "/tokenize",
                                    {"model": self.served_model_name, "prompt": label, "add_special_tokens": False})
            return [int(t) for t in body["tokens"]]
        if self.tokenizer_name:
            return list(self._local_tokenizer().encode(label, add_special_tokens=False))
        raise ModelError(
            f"cannot check that recall label {label!r} is one token: {url} has no /tokenize endpoint (not a vLLM "
            "server); set [model] tokenizer to a local copy of the same model's tokenizer"
        )

    def _local_tokenizer(self):
        """The local copy of the served model's tokenizer (`[model] tokenizer`), loaded once."""
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(bundled.resolve(self.tokenizer_name))
        return self._tokenizer

    def describe(self) -> dict[str, str]:
        return {"backend": self.name, "model_id": self.model_id, "served_model_name": self.served_model_name,
                "base_urls": " ".join(self.pool.urls), "api_key_env": self.api_key_env,
                "concurrency": str(self.concurrency), "answered_per_server": " ".join(map(str, self.pool.answered))}
