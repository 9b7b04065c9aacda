"""Latency distributions for simulation policies, sampled from a seeded ``random.Random``.

JSON forms (all values in milliseconds)::

    {"fixed": 60000}
    {"uniform": [60000, 600000]}
    {"exponential": 3600000}                     # the mean
    {"lognormal": {"medianMs": 3600000, "sigma": 0.8}}

A bare number is shorthand for ``{"fixed": n}``.
"""

from __future__ import annotations

import math
import random
from typing import Annotated, Any, Union

from pydantic import BeforeValidator, Field

from toolkit.model.base import ApiModel

Ms = Annotated[int, Field(ge=0)]


class Fixed(ApiModel):
    fixed: Ms

    def sampler(self):
        value = self.fixed
        return lambda rng: value


class Uniform(ApiModel):
    uniform: Annotated[list[Ms], Field(min_length=2, max_length=2)]

    def sampler(self):
        lo, hi = sorted(self.uniform)
        return lambda rng: lo + int(rng.random() * (hi - lo))


class Exponential(ApiModel):
    exponential: Annotated[float, Field(gt=0)]

    def sampler(self):
        rate = 1.0 / self.exponential
        return lambda rng: int(rng.expovariate(rate))


class LogNormalSpec(ApiModel):
    median_ms: Annotated[float, Field(gt=0)]
    sigma: Annotated[float, Field(ge=0, le=5)] = 0.5


class LogNormal(ApiModel):
    lognormal: LogNormalSpec

    def sampler(self):
        mu, sigma = math.log(self.lognormal.median_ms), self.lognormal.sigma
        return lambda rng: int(rng.lognormvariate(mu, sigma))


def _shorthand(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"fixed": int(value)}
    return value


Distribution = Annotated[Union[Fixed, Uniform, Exponential, LogNormal], BeforeValidator(_shorthand)]


def immediate(rng: random.Random) -> int:
    return 0
