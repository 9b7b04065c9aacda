"""Player: step through an execution's event log and watch the workflow picture change.

The events come from a simulated run (``result.events(run)``, ``run_script(...).events``)
or from a server (``client.iter_events(execution_id)``, with :meth:`Player.from_client`).
At each position the picture is :func:`toolkit.viz.render_execution_from_events` up to
that event's ``seq``.

>>> from toolkit import examples
>>> from toolkit.simulate import simulate
>>> result = simulate(examples.load("parallel-review"), runs=1, seed=1)
>>> player = Player(examples.load("parallel-review"), result.events(0))
>>> player.last(); player.event["type"]
'execution.completed'
>>> player.go(0); player.event["type"], player.index
('execution.dispatched', 0)
"""

from __future__ import annotations

import json
import threading
import traceback
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from toolkit.errors import ApiError, ErrorCode
from toolkit.viz import render_execution_from_events, style
from toolkit.viz.names import Names
from toolkit.viz.replay import event_dict, node_of_step_id
from toolkit.widgets.panes import message_html, plain_error, svg_html

if TYPE_CHECKING:
    from toolkit.viz import View

__all__ = ["Player", "describe_event"]

_END_EVENTS = frozenset({"execution.completed", "execution.failed", "execution.cancelled"})


def _when(ms: int, start: int | None) -> str:
    at = datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if start is None:
        return at
    seconds = max(0, (ms - start) // 1000)
    hours, rest = divmod(seconds, 3600)
    return f"{at} (+{hours}h{rest // 60:02d}m{rest % 60:02d}s)"


def describe_event(event: dict, start_ms: int | None = None, names: Names | None = None) -> str:
    """One line about an event: seq, type, node (by name when ``names`` knows it), time (and
    the time since dispatch); a failed execution's reason in words.

    >>> describe_event({"seq": 3, "type": "step.completed", "stepId": "step_draft_1_abc123",
    ...                 "timestamp": 1767225660000, "data": {}}, 1767225600000)
    'seq 3 · step.completed · draft · 2026-01-01 00:01:00 UTC (+0h01m00s)'
    """
    data = event.get("data") or {}
    node = data.get("nodeId") or node_of_step_id(event.get("stepId") or "")
    parts = [f"seq {event.get('seq')}", str(event.get("type"))]
    if node:
        parts.append(names.node(node) if names else str(node))
    elif data.get("groupId"):
        parts.append(names.group(data["groupId"]) if names else str(data["groupId"]))
    elif data.get("loopId"):
        parts.append(names.loop(data["loopId"]) if names else str(data["loopId"]))
    if data.get("reviewerId"):
        parts.append(f"{data['reviewerId']}: {data.get('decision', '')}".rstrip(": "))
    if data.get("failureReason"):
        parts.append(names.reason(data["failureReason"]) if names else str(data["failureReason"]))
    ts = event.get("timestamp")
    if isinstance(ts, (int, float)):
        parts.append(_when(int(ts), start_ms))
    elif ts:
        parts.append(str(ts))
    return " · ".join(parts)


class Player:
    """A slider, step buttons and a play button over ``events``; the picture shows the
    execution as it was right after the current event.

    From Python: :meth:`go`, :meth:`next`, :meth:`previous`, :meth:`first`, :meth:`last`;
    :attr:`index`, :attr:`event`, :attr:`view` (the current picture). A player made with
    :meth:`from_client` can :meth:`refresh` to fetch events that arrived since.
    """

    def __init__(self, definition, events, *, title: str | None = None, interval_ms: int = 900):
        self.definition = definition
        self.names = Names(definition)
        self.events: list[dict] = []
        self.view: View | None = None
        self.last_error: Exception | None = None
        self.last_traceback: str | None = None
        self._cache: dict[int, View] = {}
        self._source: tuple[Any, str] | None = None  # (client, execution_id) for refresh()
        self._thread: threading.Thread | None = None  # the follower, while it runs
        self._stopping = threading.Event()
        # the follower thread and the person's clicks both move the slider and redraw
        self._lock = threading.RLock()
        self.status = w.HTML()
        # positions are 1-based on screen ("event 3 of 20"); :attr:`index` is 0-based
        self.slider = w.IntSlider(
            min=1,
            max=1,
            value=1,
            description="event",
            continuous_update=False,
            readout=True,
            layout=w.Layout(width="420px"),
        )
        self.play = w.Play(min=1, max=1, interval=interval_ms, description="play", show_repeat=False)
        w.jslink((self.play, "value"), (self.slider, "value"))
        buttons = [
            ("fast-backward", "first event", self.first),
            ("step-backward", "previous event", self.previous),
            ("step-forward", "next event", self.next),
            ("fast-forward", "last event", self.last),
        ]
        self._buttons = []
        for icon, tip, action in buttons:
            button = w.Button(icon=icon, tooltip=tip, layout=w.Layout(width="40px"))
            button.on_click(lambda _, action=action: self._run(action))
            self._buttons.append(button)
        self.fetch = w.Button(description="⟳ fetch new events", layout=w.Layout(width="auto", display="none"))
        self.fetch.on_click(lambda _: self._run(self.refresh))
        self.stop_button = w.Button(description="■ stop following", layout=w.Layout(width="auto", display="none"))
        self.stop_button.on_click(lambda _: self._run(self.stop))
        self.caption = w.HTML()
        self.details = w.HTML()
        self.graph = w.HTML()
        self.graph.add_class("collab-player-graph")
        self.slider.observe(lambda change: self._run(self._show), names="value")
        header = f"<b>{escape(title)}</b>" if title else ""
        self.widget = w.VBox(
            [
                w.HTML(header),
                w.HBox([self.play, *self._buttons, self.slider, self.fetch, self.stop_button]),
                self.caption,
                self.graph,
                self.details,
                self.status,
            ]
        )
        self.widget.add_class("collab-player")
        self._set_events(events)

    @classmethod
    def from_simulation(cls, result, run: int, definition, **kwargs) -> Player:
        """Replay run ``run`` of a :class:`~toolkit.simulate.SimulationResult` (every event,
        internal ones included)."""
        return cls(definition, result.events(run), title=kwargs.pop("title", f"simulated run {run}"), **kwargs)

    @classmethod
    def from_client(
        cls, client, execution_id: str, definition=None, *, follow: bool = False, poll_s: float = 0.5, **kwargs
    ) -> Player:
        """Replay an execution's external events fetched with a client
        (:class:`~toolkit.client.HttpClient` or :class:`~toolkit.client.LocalClient`); the
        definition is fetched too unless given. With ``follow=True`` the player keeps
        fetching new events every ``poll_s`` seconds in a background thread (see :meth:`follow`)."""
        if definition is None:
            execution = client.get_execution(execution_id)
            definition = client.get_definition(execution["definitionId"])
        player = cls(
            definition,
            list(client.iter_events(execution_id)),
            title=kwargs.pop("title", f"execution {execution_id}"),
            **kwargs,
        )
        player._source = (client, execution_id)
        player.fetch.layout.display = None
        player._show_fetch_state()
        if follow:
            player.follow(poll_s)
        return player

    # ------------------------------------------------------------------ navigation

    @property
    def index(self) -> int:
        """The current event's position in :attr:`events` (0-based)."""
        return self.slider.value - 1

    @property
    def event(self) -> dict | None:
        return self.events[self.index] if self.events else None

    def go(self, index: int) -> None:
        """Show the execution right after event number ``index`` (0 = the first event;
        negative counts from the end)."""
        if not self.events:
            return
        if index < 0:
            index += len(self.events)
        self.slider.value = max(0, min(index, len(self.events) - 1)) + 1

    def next(self) -> None:
        self.go(self.index + 1)

    def previous(self) -> None:
        self.go(max(0, self.index - 1))

    def first(self) -> None:
        self.go(0)

    def last(self) -> None:
        self.go(len(self.events) - 1)

    @property
    def ended(self) -> bool:
        """True once the log holds the execution's last event (completed, failed or cancelled):
        nothing more can arrive."""
        return bool(self.events) and self.events[-1]["type"] in _END_EVENTS

    @property
    def following(self) -> bool:
        """True while a background thread follows the execution (:meth:`follow`)."""
        return self._thread is not None and self._thread.is_alive()

    def refresh(self) -> int:
        """Fetch events that arrived since (a player made with :meth:`from_client`); stays
        on the last event if it was there. Returns how many arrived. A server that cannot be
        reached (stopped, or its client closed) is said in plain words; the events already
        fetched stay."""
        if self._source is None:
            raise ValueError("this player was not made from a client; nothing to fetch")
        client, execution_id = self._source
        since = self.events[-1]["seq"] if self.events else 0
        try:
            new = list(client.iter_events(execution_id, since_seq=since))
        except (ApiError, RuntimeError) as exc:
            if isinstance(exc, ApiError) and exc.code is not ErrorCode.UNAVAILABLE:
                raise
            # httpx raises RuntimeError once its client is closed: same meaning for a person
            raise ConnectionError(
                f"cannot reach the server to fetch new events (it has stopped, or its client "
                f"was closed); the {len(self.events)} events fetched before are kept"
            ) from exc
        with self._lock:
            if new:
                at_end = self.index == len(self.events) - 1
                self._set_events(self.events + new, keep=not at_end)
            self._show_fetch_state()
        if not self.following:
            self.status.value = message_html(f"{len(new)} new event(s)", "ok")
        return len(new)

    def follow(self, poll_s: float = 0.5) -> None:
        """Fetch new events every ``poll_s`` seconds in a background thread, moving the
        picture along while the player is on the last event, until the execution ends,
        :meth:`stop` is called or the server cannot be reached."""
        if self._source is None:
            raise ValueError("this player was not made from a client; nothing to follow")
        if self.following or self.ended:
            self._show_fetch_state()
            return
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._follow, args=(poll_s,), daemon=True, name=f"collab-player-{self._source[1]}"
        )
        self._thread.start()
        self._show_fetch_state()

    def stop(self) -> None:
        """Stop following (at once between two polls; a fetch under way finishes first)."""
        self._stopping.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._show_fetch_state(stopped=thread is not None)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until following ends (the execution ended, or :meth:`stop`); False if it is
        still following after ``timeout`` seconds."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.following

    def _follow(self, poll_s: float) -> None:
        try:
            while not self._stopping.is_set():
                self.refresh()
                if self.ended:
                    break
                self._stopping.wait(poll_s)
        except Exception as exc:  # noqa: BLE001 - a background thread has only the status line to report on
            self.last_error = exc
            self.status.value = message_html(plain_error(exc), "error")
        finally:
            self._thread = None
            self._show_fetch_state()

    def _show_fetch_state(self, stopped: bool = False) -> None:
        """The fetch/stop buttons and the status line say whether more events can come."""
        if self._source is None:
            return
        following = self.following
        self.stop_button.layout.display = None if following else "none"
        self.fetch.disabled = following or self.ended
        if self.ended:
            self.fetch.description = "✓ all events fetched"
            outcome = self.events[-1]["type"].split(".", 1)[1]
            self.status.value = message_html(f"execution {outcome}: all {len(self.events)} events", "ok")
        elif following:
            self.status.value = message_html(f"following the execution live: {len(self.events)} events so far")
        elif stopped:
            self.status.value = message_html(f"stopped following after {len(self.events)} events")

    # ------------------------------------------------------------------ the widget

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/plain" in bundle:
            bundle["text/plain"] = repr(self)  # what a page without the widget shows
        return bundle

    def __repr__(self) -> str:
        return f"<Player: event {self.index + 1} of {len(self.events)}>"

    def _run(self, action):
        """Run a button's action; an error shows on the status line in plain words and is
        kept in ``last_error`` for tests."""
        self.last_error = self.last_traceback = None
        try:
            return action()
        except Exception as exc:  # noqa: BLE001 - shown to the person, kept for inspection
            self.last_error, self.last_traceback = exc, traceback.format_exc()
            self.status.value = message_html(plain_error(exc), "error")
            return None

    def _set_events(self, events, keep: bool = False) -> None:
        with self._lock:
            self._set_events_locked(events, keep)

    def _set_events_locked(self, events, keep: bool) -> None:
        self.events = sorted((event_dict(e) for e in events), key=lambda e: e["seq"])
        self._cache.clear()
        top = max(1, len(self.events))
        position = self.slider.value if keep else top
        self.play.max = top
        self.slider.max = top
        for widget in (self.slider, self.play, *self._buttons):
            widget.disabled = not self.events
        if self.slider.value != min(position, top):
            self.slider.value = min(position, top)  # its observer redraws
        else:
            self._show()

    def _show(self) -> None:
        with self._lock:
            self._draw()

    def _draw(self) -> None:
        if not self.events:
            self.caption.value = message_html("no events yet")
            self.graph.value = ""
            return
        i = self.index
        event = self.events[i]
        if i not in self._cache:
            if len(self._cache) > 64:
                self._cache.pop(next(iter(self._cache)))
            self._cache[i] = render_execution_from_events(self.definition, self.events, upto_seq=event["seq"])
        self.view = view = self._cache[i]
        start = self.events[0].get("timestamp")
        text = describe_event(event, start if isinstance(start, int) else None, self.names)
        ids = " · ".join(x for x in (event.get("stepId"), (event.get("data") or {}).get("failureReason")) if x)
        self.caption.value = (
            f'<div class="collab-player-caption" style="font-size:13px" title="{escape(ids)}">'
            f"<b>event {i + 1} of {len(self.events)}</b> · {escape(text)}</div>"
        )
        raw = json.dumps({"stepId": event.get("stepId"), "data": event.get("data") or {}}, ensure_ascii=False)
        # the raw event, ids included, for whoever wants it: folded away
        self.details.value = (
            f'<details style="font-size:11px;color:{style.MUTED}"><summary>event data</summary>'
            f"<code>{escape(raw[:400])}</code></details>"
        )
        self.graph.value = svg_html(view, "collab-graph", fit=True)
