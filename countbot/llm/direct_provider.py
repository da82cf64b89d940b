"""The `LLMProvider` that speaks OpenAI's chat-completions protocol itself, over httpx.

For every endpoint in `openai_compatible.COMPATIBLE` (OpenAI, DeepSeek, DashScope, Moonshot,
Zhipu, OpenRouter, Groq, Ollama, vLLM, LM Studio, any `api_base` behind `openai/`). It sends the
same JSON litellm would and reads the server-sent events itself (`openai_stream.py`, the hot
path: typed chunks decoded by msgspec); the chunks go through the same `StreamAccumulator`,
retries, deadline and fallbacks as litellm's (`RetryingProvider`). Measured cold, one streamed
call in a fresh process costs about a tenth of litellm's time and a fifth of its memory
(bench/cold_start.py).
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Protocol

from countbot.llm.errors import ModelFailure
from countbot.llm.local_endpoint import LocalEndpoint, LocalServerError
from countbot.llm.openai_compatible import (
    Endpoint,
    EndpointError,
    chat_completions_url,
    prefix_of,
    resolve_endpoint,
)
from countbot.llm.openai_format import EncodedWire, encode_body
from countbot.llm.openai_stream import EventData, typed_chunk
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.retrying_provider import RetryingProvider, StreamFacts, WholeCompletion
from countbot.llm.stream_accumulator import is_whole_answer
from countbot.llm.types import ChatRequest, ToolSpec

if TYPE_CHECKING:
    import httpx

# An error body is read up to this size for the provider's message; the rest is not worth it.
_MAX_ERROR_BODY = 64 * 1024
_USER_AGENT = "CountBot"


class ProviderHTTPError(Exception):
    """A non-2xx answer: its status, the provider's words and the response (for Retry-After)."""

    def __init__(self, status_code: int, message: str, response: httpx.Response) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.response = response


class ToolCallForm(Protocol):
    """How a request that offers tools asks for calls when the model's native tool calls are not
    used (constrained calls, `countbot/constrained_calls/`, handed in by the runtime)."""

    def request_fields(self, request: ChatRequest) -> dict[str, Any]:
        """The body's fields that replace `tools` (and may rewrite `messages`)."""
        ...

    def chunks(self, chunks: AsyncIterator[Any], tools: Sequence[ToolSpec]) -> AsyncIterator[Any]:
        """The server's chunks turned into those of an ordinary reply (text, tool calls)."""
        ...


class DirectProvider(RetryingProvider):
    """Streams from OpenAI-compatible endpoints with retries, a deadline and fallbacks.

    One `httpx.AsyncClient` (made at the first call, in a worker thread that also imports httpx:
    an idle daemon holds neither) keeps connections alive across calls. The endpoint of every
    model is resolved up front: a configuration mistake (unknown provider, missing key or
    address) ends the first stream at once, in words. A `local/` model's endpoint is its child
    server (`local`), asked for its address on each call because a restarted child listens on a
    new port. With a `tool_form`, requests that offer tools ask for calls in that form.
    """

    def __init__(
        self,
        model: str,
        options: ProviderOptions | None = None,
        *,
        local: LocalEndpoint | None = None,
        tool_form: ToolCallForm | None = None,
    ) -> None:
        super().__init__(model, options)
        self._local = local
        self._tool_form = tool_form
        self._endpoints: dict[str, Endpoint] = {}
        self._config_error: str | None = None
        try:
            for model_name in self._models:
                if prefix_of(model_name) == "local":
                    if local is None:
                        raise EndpointError(f"no local model server for {model_name}")
                    continue
                endpoint = resolve_endpoint(
                    model_name, self._api_base, self._api_key, fallback=model_name != model
                )
                self._endpoints[model_name] = endpoint
        except EndpointError as exc:
            self._config_error = str(exc)
        keys = {e.api_key for e in self._endpoints.values() if e.api_key}
        self._secrets = tuple(keys)
        # The key the client sends by default: the primary model's (other endpoints set theirs).
        primary = self._endpoints.get(model)
        self._client_key = primary.api_key if primary is not None else None
        self._urls: dict[str, httpx.URL] = {}
        self._client: httpx.AsyncClient | None = None
        self._client_made = asyncio.Lock()
        self._wire = EncodedWire()

    async def _before_first_call(self) -> ModelFailure | None:
        if self._config_error is not None:
            return ModelFailure(self._config_error, retryable=False, kind="bad_request")
        return None

    async def prepare(self) -> None:
        await super().prepare()
        if self._config_error is None:
            await self._http()

    async def aclose(self) -> None:
        """Close the kept-alive connections (a later call opens new ones)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _url_of(self, model: str) -> str | None:
        endpoint = self._endpoints.get(model)
        return endpoint.url if endpoint else None

    async def _endpoint_of(self, model: str) -> Endpoint:
        endpoint = self._endpoints.get(model)
        if endpoint is not None:
            return endpoint
        assert self._local is not None  # checked in __init__
        url = chat_completions_url(await self._local.url())
        return Endpoint("local", url, "local", self._local.api_key)

    def _chunks(self, model: str, request: ChatRequest, facts: StreamFacts) -> AsyncIterator[Any]:
        if self._tool_form is not None and request.tools:
            return self._tool_form.chunks(self._wire_chunks(model, request, facts), request.tools)
        return self._wire_chunks(model, request, facts)

    def _failure(self, exc: Exception, model: str) -> ModelFailure:
        if isinstance(exc, LocalServerError):
            return ModelFailure(str(exc), retryable=False, kind="unreachable")
        return super()._failure(exc, model)

    async def _wire_chunks(
        self, model: str, request: ChatRequest, facts: StreamFacts
    ) -> AsyncIterator[Any]:
        endpoint = await self._endpoint_of(model)
        local = self._local if endpoint.provider == "local" else None
        try:
            client = await self._http()
            import httpx  # loaded by `_http` (in a worker thread): here for the name only

            try:
                async with aclosing(self._sse_chunks(client, endpoint, request, facts)) as chunks:
                    async for chunk in chunks:
                        yield chunk
            except httpx.TransportError:
                code = await local.exit_code() if local is not None else None
                if code is None:
                    raise
                raise LocalServerError(
                    f"The local model server stopped while answering (exit code {code}); "
                    "it is being restarted, send the message again in a moment"
                ) from None
        finally:
            if local is not None:
                local.done()

    async def _sse_chunks(
        self,
        client: httpx.AsyncClient,
        endpoint: Endpoint,
        request: ChatRequest,
        facts: StreamFacts,
    ) -> AsyncIterator[Any]:
        reply = await client.send(self._request(client, endpoint, request), stream=True)
        async with aclosing(reply):
            if reply.status_code >= 300:
                raise await _http_error(reply)
            facts.content_type = reply.headers.get("content-type", "")
            if "text/event-stream" not in facts.content_type:
                if is_whole_answer(facts.content_type):
                    # A server that ignored "stream": one JSON body with the whole message.
                    yield WholeCompletion(_decode(await reply.aread()))
                return  # anything else is no answer: the accumulator says what came
            events, done = EventData(), False
            # Read on to the end of the body after [DONE]: a response read to its end leaves the
            # connection to the pool for the next call.
            async for piece in reply.aiter_bytes():
                for data in events.feed(piece):
                    done = done or data == b"[DONE]"
                    if not done:
                        chunk = typed_chunk(data)
                        yield chunk if chunk is not None else _decode(data)

    def _request(
        self, client: httpx.AsyncClient, endpoint: Endpoint, request: ChatRequest
    ) -> httpx.Request:
        """The POST of `request` to `endpoint`.

        httpx makes a request several times faster from a parsed URL with the client's headers than
        from a URL string and headers of its own (docs/llm_call.md): so the URL is parsed once per
        endpoint, and the headers every call sends (the primary model's key among them) are the
        client's.
        """
        url = self._urls.get(endpoint.url)
        if url is None:
            import httpx  # loaded by `_http`: here for the name only

            if len(self._urls) > 8:  # a restarted local server listens on a new port
                self._urls.clear()
            url = self._urls[endpoint.url] = httpx.URL(endpoint.url)
        body = encode_body(self._body(endpoint, request))
        outgoing = client.build_request("POST", url, content=body)
        if endpoint.api_key != self._client_key:  # a fallback's or the local server's endpoint
            outgoing.headers.pop("Authorization", None)
            if endpoint.api_key:
                outgoing.headers["Authorization"] = f"Bearer {endpoint.api_key}"
        return outgoing

    async def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            async with self._client_made:  # concurrent first calls share one client
                if self._client is None:
                    # A worker thread imports httpx (tens of ms) and loads the CA bundle.
                    self._client = await asyncio.to_thread(self._new_client)
        return self._client

    def _new_client(self) -> httpx.AsyncClient:
        import httpx

        # Our deadline (RetryingProvider) bounds the whole call; httpx's only the connect.
        timeout = httpx.Timeout(None, connect=min(self._timeout, 30.0))
        headers = {
            "User-Agent": _USER_AGENT,
            "Accept": "text/event-stream",
            "Content-Type": "application/json",
            **self._extra_headers,
        }
        if self._client_key:
            headers["Authorization"] = f"Bearer {self._client_key}"
        return httpx.AsyncClient(
            timeout=timeout,
            headers=headers,
            trust_env=True,
            verify=True if self._speaks_tls() else _no_trusted_roots(),
        )

    def _speaks_tls(self) -> bool:
        """Whether a call may need TLS: an https endpoint, or a proxy reached over https.

        Loading the CA bundle costs time and memory (docs/cold_start.md); a provider whose endpoints
        are all plain HTTP (a local model server, Ollama, vLLM on the LAN) has no use for it.
        """
        import urllib.request  # loaded with httpx, which reads the proxies there too

        urls = [endpoint.url for endpoint in self._endpoints.values()]
        urls += [url for scheme, url in urllib.request.getproxies().items() if scheme != "no"]
        return any(not url.lower().startswith("http://") for url in urls)

    def _body(self, endpoint: Endpoint, request: ChatRequest) -> dict[str, Any]:
        native_tools = request.tools if self._tool_form is None else ()
        messages, tools = self._wire.encode(request.messages, native_tools)
        body: dict[str, Any] = {
            "model": endpoint.wire_model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools and self._tool_form is not None:
            body.update(self._tool_form.request_fields(request))
        elif request.tools:
            body["tools"] = tools
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body


def _no_trusted_roots() -> ssl.SSLContext:
    """A TLS context that trusts no certificate: for a client that speaks only plain HTTP, so a
    connection that did need TLS would fail its verification instead of going unverified."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _decode(data: str | bytes) -> Any:
    """One SSE data payload as nested attribute objects (the shape litellm's chunks have)."""
    try:
        chunk = json.loads(data, object_hook=lambda fields: SimpleNamespace(**fields))
    except ValueError:
        text = data if isinstance(data, str) else data.decode("utf-8", "replace")
        shown = " ".join(text.split())[:200]
        message = f"the server answered with something that is not JSON: {shown}"
        raise ProviderHTTPError(502, message, _response(502)) from None
    error = getattr(chunk, "error", None)
    if error is not None:  # some servers report a failure mid-stream as an event
        message = getattr(error, "message", None) or str(error)
        raise ProviderHTTPError(500, str(message), _response(500))
    return chunk


def _response(status: int) -> httpx.Response:
    """A bodiless response for a failure found in the stream (httpx is loaded: it is streaming)."""
    import httpx

    return httpx.Response(status)


async def _http_error(reply: httpx.Response) -> ProviderHTTPError:
    raw = b""
    async for piece in reply.aiter_bytes():
        raw += piece
        if len(raw) >= _MAX_ERROR_BODY:
            break
    text = raw[:_MAX_ERROR_BODY].decode("utf-8", "replace").strip()
    return ProviderHTTPError(reply.status_code, text or reply.reason_phrase, reply)
