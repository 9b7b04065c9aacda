"""Latency distributions for simulation policies, sampled from a seeded ``random.Random``.

JSON forms (all values in milliseconds)::

    {"fixed": 60000}
    {"uniform": [60000, 600000]}
    {"exponential": 3600000}                     # the mean
    {"lognormal": {"medianMs": 3600000, "sigma": 0.8}}
    {"empirical": [120000, 340000, 3600000]}    # observed latencies, drawn uniformly

A bare number is shorthand for ``{"fixed": n}``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BeforeValidator, Discriminator, Field, Tag

from toolkit.model.base import ApiModel

Ms = Annotated[int, Field(ge=0)]
Sampler = Callable[[random.Random], int]  # one latency in ms, drawn from the run's generator


class Fixed(ApiModel):
    fixed: Ms

    def sampler(self) -> Sampler:
        value = self.fixed
        return lambda rng: value


class Uniform(ApiModel):
    uniform: Annotated[list[Ms], Field(min_length=2, max_length=2)]

    def sampler(self) -> Sampler:
        lo, hi = sorted(self.uniform)
        return lambda rng: lo + int(rng.random() * (hi - lo))


class Exponential(ApiModel):
    exponential: Annotated[float, Field(gt=0)]

    def sampler(self) -> Sampler:
        rate = 1.0 / self.exponential
        return lambda rng: int(rng.expovariate(rate))


class LogNormalSpec(ApiModel):
    median_ms: Annotated[float, Field(gt=0)]
    sigma: Annotated[float, Field(ge=0, le=5)] = 0.5


class LogNormal(ApiModel):
    lognormal: LogNormalSpec

    def sampler(self) -> Sampler:
        mu, sigma = math.log(self.lognormal.median_ms), self.lognormal.sigma
        return lambda rng: int(rng.lognormvariate(mu, sigma))


class Empirical(ApiModel):
    empirical: Annotated[list[Ms], Field(min_length=1)]

    def sampler(self) -> Sampler:
        values = tuple(self.empirical)
        return lambda rng: rng.choice(values)


def _shorthand(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"fixed": int(value)}
    return value


_KINDS = {
    "fixed": Fixed,
    "uniform": Uniform,
    "exponential": Exponential,
    "lognormal": LogNormal,
    "empirical": Empirical,
}


def _kind(value: Any) -> str | None:
    """The union member by the one key given, so an error names that member's rule only."""
    if isinstance(value, dict):
        return next(iter(value)) if len(value) == 1 and next(iter(value)) in _KINDS else None
    return next((k for k, cls in _KINDS.items() if isinstance(value, cls)), None)


# The members and tags spelt out (the same as _KINDS) so that type checkers see the union too.
Distribution = Annotated[
    Annotated[Fixed, Tag("fixed")]
    | Annotated[Uniform, Tag("uniform")]
    | Annotated[Exponential, Tag("exponential")]
    | Annotated[LogNormal, Tag("lognormal")]
    | Annotated[Empirical, Tag("empirical")],
    Discriminator(
        _kind,
        custom_error_type="distribution",
        custom_error_message="a number or exactly one of {fixed}, {uniform}, {exponential}, {lognormal}, {empirical}",
    ),
    BeforeValidator(_shorthand),
]


def immediate(rng: random.Random) -> int:
    return 0
