"""The connection type the store's SQL helpers take: one a pool lent out, or one opened directly.

A pool lends a :class:`asyncpg.pool.PoolConnectionProxy`, which forwards to its connection but is no
:class:`asyncpg.Connection` to a type checker; migrations run on a connection opened directly. Both
offer the same query methods, so helpers accept either.
"""

from __future__ import annotations

from typing import TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

__all__ = ["Connection"]

Connection: TypeAlias = asyncpg.Connection | PoolConnectionProxy
