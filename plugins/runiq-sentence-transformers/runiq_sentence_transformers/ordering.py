"""The order a call's texts are encoded in: most tokens first, so each batch pads little.

``SentenceTransformer.encode`` sorts a call's texts by character length. Chunkers fill chunks up to a
character limit, so most chunks of a corpus have nearly the same length in characters while their token
counts still differ by a third or more (words of different lengths, numbers, punctuation): within those
chunks the character order is close to random in tokens, and every batch pads to its longest member.
Sorting by token count instead, and giving ``encode`` one batch at a time, measured 17% fewer padded
tokens on CISI's chunks at batch size 32 (the tokenisation it adds is about 1% of the encode).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["most_tokens_first"]


def most_tokens_first(model: Any, texts: Sequence[str]) -> list[int]:
    """Positions of ``texts``, most tokens first (ties keep their order). A model without a Hugging Face
    tokenizer is sorted by character length, as ``encode`` would."""
    lengths = _token_counts(model, texts)
    return sorted(range(len(texts)), key=lambda i: -lengths[i])


def _token_counts(model: Any, texts: Sequence[str]) -> Sequence[int]:
    from transformers import PreTrainedTokenizerBase

    tokenizer = getattr(model, "tokenizer", None)
    if not isinstance(tokenizer, PreTrainedTokenizerBase):
        return [len(text) for text in texts]
    limit = getattr(model, "max_seq_length", None)  # tokens past it are cut off: they cost nothing
    ids = tokenizer(
        list(texts),
        truncation=isinstance(limit, int),
        max_length=limit if isinstance(limit, int) else None,
        return_attention_mask=False,
        return_token_type_ids=False,
    )["input_ids"]
    return [len(row) for row in ids]
