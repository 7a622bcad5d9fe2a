"""Read the agents' text answers: plans, kernels and experience summaries (pure functions).

Agents answer in text (fenced code, JSON blocks) rather than tool calls, which keeps the nodes
provider-agnostic and lets scripted chat models drive the whole graph in tests.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_DEF = r"^\s*def\s+{name}\s*\("
_ANY_DEF = re.compile(r"^\s*def\s+\w+\s*\(", re.M)
_KERNEL_HINT = re.compile(r"@\s*nki\.jit|neuronxcc|nki\.language|\bnl\.")


@dataclass(frozen=True)
class CodeBlock:
    lang: str
    body: str


def code_blocks(text: str) -> list[CodeBlock]:
    """Return the fenced blocks of `text` in order (an unterminated last block counts)."""
    return [CodeBlock(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text or "")]


def extract_kernel(text: str, kernel_name: str | None = None) -> str | None:
    """Return the fenced block that defines the kernel, or None (status `no_code`).

    With `kernel_name`, the block must define that function; otherwise it must define a function
    and look like NKI. When several blocks qualify the last one wins (models refine as they go).
    """
    blocks = [b for b in code_blocks(text) if b.lang in ("", "python", "py", "python3")]
    if kernel_name:
        pattern = re.compile(_DEF.format(name=re.escape(kernel_name)), re.M)
        matches = [b for b in blocks if pattern.search(b.body)]
    else:
        matches = [b for b in blocks if _ANY_DEF.search(b.body) and _KERNEL_HINT.search(b.body)]
    if not matches:
        return None
    return matches[-1].body.strip("\n") + "\n"


@dataclass(frozen=True)
class ParsedPlan:
    title: str
    bottleneck: str
    change: str
    expected_effect: str
    text: str


_PLAN_KEYS = ("title", "bottleneck", "change", "expected_effect")


def parse_plan(text: str) -> ParsedPlan | None:
    """Parse a planner answer: a JSON object (fenced or bare) or, as a fallback, free text.

    Returns None for an empty answer.
    """
    text = (text or "").strip()
    if not text:
        return None
    data = _json_object(text)
    if data is not None and any(data.get(k) for k in _PLAN_KEYS):
        fields = {k: _as_text(data.get(k, "")) for k in _PLAN_KEYS}
        rendered = "\n".join(f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in fields.items() if v)
        return ParsedPlan(**fields, text=rendered)
    title = _first_title(text)
    return ParsedPlan(title=title, bottleneck="", change=text, expected_effect="", text=text)


@dataclass(frozen=True)
class ParsedSummary:
    title: str
    description: str
    snippet_before: str
    snippet_after: str


_NO_OPT = re.compile(r"no optimi[sz]ation found", re.I)


def says_no_optimization(text: str) -> bool:
    """Return whether a summarizer answer declines ("No optimization found"): a valid answer."""
    return bool(_NO_OPT.search((text or "").strip()[:200]))


def parse_summary(text: str) -> ParsedSummary | None:
    """Parse a summarizer answer; None when it declines or has no title."""
    text = (text or "").strip()
    if not text or says_no_optimization(text):
        return None
    title = _first_title(text)
    if not title:
        return None
    first_fence = text.find("```")
    prose = text if first_fence < 0 else text[:first_fence]
    lines = [ln for ln in prose.splitlines() if ln.strip()]
    if lines and title in lines[0]:
        lines = lines[1:]
    lines = [ln for ln in lines if ln.strip().rstrip(":").lower() not in ("original", "optimized")]
    blocks = code_blocks(text)
    before = blocks[0].body.strip() if len(blocks) >= 1 else ""
    after = blocks[1].body.strip() if len(blocks) >= 2 else ""
    return ParsedSummary(title=title, description="\n".join(lines).strip(), snippet_before=before,
                         snippet_after=after)


def _first_title(text: str) -> str:
    bold = re.search(r"\*\*(.+?)\*\*", text)
    if bold:
        return bold.group(1).strip()
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line and not line.startswith("```"):
            return line[:160]
    return ""


def _json_object(text: str) -> dict | None:
    candidates = [b.body for b in code_blocks(text) if b.lang in ("json", "")]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value)


_JIT_DEF = re.compile(r"@\s*(?:nki\.)?jit[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)\s*\(")
_TOP_DEF = re.compile(r"^def\s+(\w+)\s*\(", re.M)


def kernel_function_name(code: str) -> str | None:
    """Return the name of the `@nki.jit` function in `code` (else its last top-level function)."""
    jit = _JIT_DEF.search(code or "")
    if jit:
        return jit.group(1)
    defs = _TOP_DEF.findall(code or "")
    return defs[-1] if defs else None
