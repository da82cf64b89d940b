"""Pulling catalogue models: verified by SHA-256 before the file is kept (a loopback server)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from countbot.local_model.catalogue import CATALOGUE, CatalogueModel, UrlSource, model_file
from countbot.local_model.pull import PullError, is_installed, pull, remove_model

BODY = b"GGUF" + bytes(range(256)) * 64


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/model.gguf"
    server.shutdown()


def entry(url: str, sha256: str) -> CatalogueModel:
    return CatalogueModel(
        "test", "Test", "test.gguf", len(BODY), sha256, "MIT", "us", UrlSource(url), "a test"
    )


def test_a_verified_download_is_kept_with_progress_and_can_be_removed(
    url: str, tmp_path: Path
) -> None:
    model = entry(url, hashlib.sha256(BODY).hexdigest())
    seen: list[tuple[int, int]] = []
    path = pull(model, tmp_path, lambda done, total: seen.append((done, total)))
    assert path.read_bytes() == BODY and is_installed(model, tmp_path)
    assert seen[-1] == (len(BODY), len(BODY))
    assert remove_model(model, tmp_path) and not path.exists() and not remove_model(model, tmp_path)


def test_a_download_with_the_wrong_hash_is_not_kept(url: str, tmp_path: Path) -> None:
    model = entry(url, "0" * 64)
    with pytest.raises(PullError, match="SHA-256"):
        pull(model, tmp_path)
    assert list(tmp_path.iterdir()) == []  # no partial file, no scratch folder


def test_every_catalogue_model_names_its_licence_publisher_and_hash() -> None:
    for model in CATALOGUE:
        assert model.licence and model.publisher and len(model.sha256) == 64 and model.size > 0
        assert model_file(model.name, Path("/m")) == Path("/m") / model.file
    assert model_file("/abs/own.gguf", Path("/m")) == Path("/abs/own.gguf")
