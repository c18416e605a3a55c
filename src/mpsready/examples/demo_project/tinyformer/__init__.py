"""tinyformer: a small character-level transformer."""

from tinyformer.model import TinyFormer, TinyFormerConfig

__all__ = ["TinyFormer", "TinyFormerConfig"]
