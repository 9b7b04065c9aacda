"""The parts of the server's limits that decide who goes next, on an injected clock: the
token bucket and in-flight count per workspace (toolkit.services.fair_shares.Tenants) and the
fair gate's round robin (toolkit.services.fair_shares.FairGate)."""

from __future__ import annotations

import asyncio

from toolkit.services.fair_shares import FairGate, Limits, Tenants


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_refills_at_the_rate_and_says_how_long_to_wait():
    clock = Clock()
    tenants = Tenants(Limits(rate_per_s=2, burst=3, in_flight=0), clock)
    assert [tenants.admit("a") for _ in range(3)] == [None] * 3
    refused = tenants.admit("a")
    assert refused.code.value == "RESOURCE_EXHAUSTED" and refused.retry_after_s == 1
    assert tenants.admit("b") is None  # another workspace has its own bucket
    clock.now += 0.5  # one token back
    assert tenants.admit("a") is None and tenants.admit("a") is not None
    clock.now += 60  # never more than the bucket holds
    assert [tenants.admit("a") is None for _ in range(4)] == [True, True, True, False]


def test_a_slow_rate_asks_for_a_longer_wait():
    tenants = Tenants(Limits(rate_per_s=0.1, burst=1, in_flight=0), Clock())
    assert tenants.admit("a") is None
    assert tenants.admit("a").retry_after_s == 10


def test_in_flight_slots_are_given_back():
    tenants = Tenants(Limits(rate_per_s=0, in_flight=2), Clock())
    assert tenants.admit("a") is None and tenants.admit("a") is None
    refused = tenants.admit("a")
    assert "in flight" in refused.message and refused.retry_after_s == 1
    tenants.release("a")
    assert tenants.admit("a") is None


def test_the_fair_gate_serves_waiting_workspaces_in_turn():
    async def scenario() -> list[str]:
        gate, order = FairGate(1), []
        await gate.acquire("a")  # the one slot, taken

        async def request(tenant: str, n: int) -> None:
            await gate.acquire(tenant)
            order.append(f"{tenant}{n}")
            await asyncio.sleep(0)
            gate.release()

        tasks = [asyncio.create_task(request("a", n)) for n in range(4)]
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(request("b", 0)))  # asks last, goes second
        await asyncio.sleep(0)
        gate.release()
        await asyncio.gather(*tasks)
        assert gate.running == 0
        return order

    assert asyncio.run(scenario()) == ["a0", "b0", "a1", "a2", "a3"]


def test_a_cancelled_waiter_gives_up_its_place():
    async def scenario() -> None:
        gate = FairGate(1)
        await gate.acquire("a")
        waiting = asyncio.create_task(gate.acquire("b"))
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        gate.release()
        assert gate.running == 0
        await gate.acquire("c")  # free again at once
        assert gate.running == 1

    asyncio.run(scenario())
