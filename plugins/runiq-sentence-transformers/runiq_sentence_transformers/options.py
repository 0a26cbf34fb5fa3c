"""The validated options of the ``sentence-transformers`` embedding provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["DEVICE_PATTERN", "PACKAGED_MODEL_NAME", "PROVIDER_NAME", "SentenceTransformerOptions", "local_model_path"]

PROVIDER_NAME = "sentence-transformers"
PACKAGED_MODEL_NAME = "all-MiniLM-L6-v2"
DEVICE_PATTERN = r"^(cpu|mps|(cuda|xpu)(:\d{1,2})?)$"


def local_model_path(value: Any) -> Any:
    """The one rule for a model path option: a non-empty local path, never a URL (nothing downloads)."""
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("model_path must not be empty")
        if "://" in value:
            raise ValueError("model_path must be a local directory, not a URL")
    return value


class SentenceTransformerOptions(BaseModel):
    """Options of one local sentence-transformers model.

    ``model_path=None`` is the packaged all-MiniLM-L6-v2. Whether another path exists is checked when
    the client opens (registration does no file I/O); a URL is refused at once.
    """

    # hide_input_in_errors: a ValidationError must not quote a value (paths are not for error text).
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    model_path: str | None = None
    device: str = Field(default="cpu", pattern=DEVICE_PATTERN)
    batch_size: int = Field(default=32, ge=1, le=4096)
    normalize: bool = True
    model_name: str | None = Field(default=None, pattern=r"^\S.{0,255}$")

    @field_validator("model_path", mode="before")
    @classmethod
    def _local_path(cls, value: Any) -> Any:
        return local_model_path(value)

    @property
    def identity(self) -> str:
        """The model identity recorded with an index, so a changed model or normalisation is detected."""
        if self.model_name is not None:
            name = self.model_name
        elif self.model_path is None:
            name = PACKAGED_MODEL_NAME
        else:
            name = Path(self.model_path).name or "local-model"
        return f"{PROVIDER_NAME}:{name}" + ("" if self.normalize else "+unnormalized")
