"""`neuronxcc.nki.typing` (nt.*): annotations a kernel may put on its parameters."""
from __future__ import annotations


class _Annotation:
    """`nt.tensor`, `nt.tensor[shape, dtype]`: accepted and ignored (shapes come from the args)."""

    def __init__(self, name: str, mutable: bool = False) -> None:
        self.name, self.mutable = name, mutable

    def __getitem__(self, item) -> "_Annotation":
        return self

    def __call__(self, *args, **kwargs) -> "_Annotation":
        return self

    def __repr__(self) -> str:
        return f"nt.{self.name}"


tensor = _Annotation("tensor")
mutable_tensor = _Annotation("mutable_tensor", mutable=True)
scalar = _Annotation("scalar")


def is_mutable(annotation) -> bool:
    return isinstance(annotation, _Annotation) and annotation.mutable
