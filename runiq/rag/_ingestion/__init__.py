"""Managed ingestion: strategies, the pipeline, the manager and the scheduler."""

from __future__ import annotations
