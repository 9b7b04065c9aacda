"""Webhook push delivery (semantics §6), the work a serving process does in the background:
:mod:`.deliverer` picks the due outbox rows fairly and records each attempt's outcome,
:mod:`.destinations` checks where an attempt may go, :mod:`.pinned_client` POSTs to the
checked address, :mod:`.attempt_log` writes one log line per attempt.

The outbox itself (what is due, what an attempt came to) is :mod:`toolkit.services.workflow.deliveries`;
the payload, signature and retry schedule are :mod:`toolkit.webhooks`."""
