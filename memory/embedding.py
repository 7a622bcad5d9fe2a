"""Text embeddings for experience retrieval that work offline by default.

Chroma's default embedding function downloads an ONNX model on first use, so the store never uses
it: the store computes vectors itself and hands them to Chroma. The default is a model-free
feature-hashing embedding of code and text tokens (stable across processes and machines: it uses
blake2b, not Python's salted `hash`). Users with a model can pick "sentence-transformers:NAME" or
"openai:NAME" (any OpenAI-compatible endpoint, configured by the usual OPENAI_* variables).
"""
from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

DEFAULT_HASHING_DIM = 1024


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 rows; `spec` names it in collection metadata."""

    spec: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Words that occur in nearly every kernel or summary carry no signal about *which* optimization
# applies; dropping them stands in for IDF weighting, which would need corpus statistics.
_STOP = frozenset("""
def return for in range if else elif import from as with while and or not is none true false self
the a an of to and is are be this that it on by at into we use used using can was were which
""".split())


@lru_cache(maxsize=1 << 16)
def _subwords(raw: str) -> tuple[str, ...]:
    """Sub-words of a token (snake_case, dotted and camelCase parts); empty when it has only one."""
    parts = [p.lower() for piece in re.split(r"[._]", raw) for p in _CAMEL.findall(piece)]
    return tuple(p for p in parts if p not in _STOP and len(p) > 1) if len(parts) > 1 else ()


def _features(text: str) -> dict[str, float]:
    """Weighted hashing features: whole (dotted) tokens, their sub-words, and adjacent-token bigrams."""
    feats: dict[str, float] = {}
    prev = None
    for raw in _TOKEN.findall(text):
        token = raw.lower()
        if token in _STOP or len(token) < 2:
            prev = None
            continue
        feats["t:" + token] = feats.get("t:" + token, 0.0) + 1.0
        for part in _subwords(raw):
            feats["s:" + part] = feats.get("s:" + part, 0.0) + 0.5
        if prev is not None:
            feats[f"b:{prev} {token}"] = feats.get(f"b:{prev} {token}", 0.0) + 0.5
        prev = token
    return feats


def _sublinear(weight: float) -> float:
    """Damp repeated tokens (a long kernel repeats `nl.load` many times) like tf-idf's 1 + log tf."""
    return 1.0 + math.log(weight) if weight >= 1.0 else weight


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return h % dim, (1.0 if h >> 63 else -1.0)


class HashingEmbedder:
    """Signed feature hashing of tokens with sub-linear term frequency (no model, no download)."""

    def __init__(self, dim: int = DEFAULT_HASHING_DIM) -> None:
        if dim < 16:
            raise ValueError(f"hashing embedding: dim must be >= 16, got {dim}")
        self.dim = dim
        self.spec = f"hashing:{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, count in _features(text).items():
                index, sign = _bucket(feature, self.dim)
                out[row, index] += sign * _sublinear(count)
        return normalize_rows(out)


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (downloads only if the model is not already cached)."""

    def __init__(self, name: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise ImportError(f"memory.embedding='sentence-transformers:{name}' needs the "
                              "sentence-transformers package: pip install sentence-transformers") from err
        self.spec = f"sentence-transformers:{name}"
        self._model = SentenceTransformer(name)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(list(texts), normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint (OPENAI_API_KEY / OPENAI_BASE_URL as usual)."""

    def __init__(self, name: str) -> None:
        from openai import OpenAI

        self.spec = f"openai:{name}"
        self._name = name
        self._client = OpenAI()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        reply = self._client.embeddings.create(model=self._name, input=list(texts))
        return normalize_rows(np.asarray([d.embedding for d in reply.data], dtype=np.float32))


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Scale each row to unit L2 norm (all-zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _hashing(arg: str) -> Embedder:
    if not arg:
        return HashingEmbedder()
    if not arg.isdigit():
        raise ValueError(f"memory.embedding='hashing:{arg}': the argument is the dimension, an integer")
    return HashingEmbedder(int(arg))


def _named(kind: str, factory: Callable[[str], Embedder]) -> Callable[[str], Embedder]:
    def build(arg: str) -> Embedder:
        if not arg:
            raise ValueError(f"memory.embedding='{kind}' needs a model name: '{kind}:NAME'")
        return factory(arg)
    return build


EMBEDDERS: dict[str, Callable[[str], Embedder]] = {
    "hashing": _hashing,
    "sentence-transformers": _named("sentence-transformers", SentenceTransformerEmbedder),
    "openai": _named("openai", OpenAIEmbedder),
}


def make_embedder(spec: str) -> Embedder:
    """Build the embedder a `memory.embedding` string names, e.g. "hashing", "openai:text-embedding-3-small"."""
    kind, _, arg = spec.partition(":")
    if kind not in EMBEDDERS:
        raise ValueError(f"memory.embedding={spec!r}: unknown kind {kind!r}; choose one of {sorted(EMBEDDERS)}")
    return EMBEDDERS[kind](arg)
