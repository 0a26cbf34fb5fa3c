"""The order a call's texts are encoded in: most tokens first, so each batch pads little.

``SentenceTransformer.encode`` sorts a call's texts by character length, and a batch pads to its
longest member in tokens. Characters are a loose measure of tokens: among CISI's chunks of 900 characters
and more, the token count runs from 161 to 210 (5th to 95th percentile), so texts of the same character
length still differ by a quarter in tokens, and each batch of them pads to the most costly one.
Sorting by token count instead, and giving ``encode`` one batch at a time: on CISI's 2,261 chunks
(all-MiniLM-L6-v2, batch size 32, one call) the padding falls from 45,500 tokens to 4,500, and the tokens
through the model by 14.5%; counting the tokens costs about 1% of the encode (a second tokenisation).
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
