"""
Event-loop bridges: how an awaiting coroutine learns that its transfer finished.

Each event loop (an asyncio or uvloop loop, or one `trio.run`) gets one bridge with one
`CompletionQueue`: the engine's loop thread appends finished transfers to it and raises its
notifier (an eventfd on Linux, a pipe on macOS and the BSDs, a loopback socket on Windows:
csrc/platform.h) only when it goes from empty to non-empty. The bridge watches the notifier
with the event loop's own machinery and, when it fires, drains every finished transfer in one
pass:

* asyncio / uvloop: one permanent `loop.add_reader(fd, drain)`; `drain` resolves futures.
  asyncio's Proactor loop (Windows' default) has no `add_reader`: there a task receives on the
  notifier socket with `loop.sock_recv` (overlapped I/O) and drains after each receive.
* trio: a system task loops on `trio.lowlevel.wait_readable(fd)` and reschedules tasks (a
  socket on Windows, which trio can wait on).

So a burst of N completions costs one wake-up of the event loop and no thread hand-off per
request (no `call_soon_threadsafe`, no executor). Bridges are found from the running loop:
asyncio loops key a `WeakKeyDictionary`, trio runs a `RunVar`. A client can therefore be used
from several event loops in turn (one after another, or at once from different threads).

Streaming responses use the same queue: a consumer that finds no data arms a notification
(`PendingTransfer.read_chunk(False)`) and sleeps in `wait_for_news`; the loop thread queues the
transfer at most once until it has been drained, however many chunks arrive meanwhile.

Cancellation: when the awaiting task is cancelled, the bridge sends the transfer a cancel
command and re-raises at once; the transfer stays registered in the queue (which keeps its
request body alive for the C side) until the loop thread reports it finished.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import typing
import weakref

import anyio.lowlevel
import sniffio

from . import _core

if typing.TYPE_CHECKING:
    from ._transports import EngineArguments

__all__ = ["current_bridge"]

# Deferring the loop thread's wake-up (_AsyncioBridge.submit) pays from this many transfers
# in flight on; below, the request's latency matters more than the wake-up's CPU. Measured
# (docs/performance.md): from 4, 10 tasks ran 30k -> 34k requests/s and 64 tasks 46k -> 54k;
# deferring from 1 cost 8 tasks a tenth of their throughput.
_DEFER_FROM_IN_FLIGHT = 4


def _asyncio_scope_checkpoint() -> typing.Callable[[], typing.Awaitable[None]]:
    """anyio's "raise if an enclosing cancel scope was cancelled", bound to its asyncio backend
    once. The public `anyio.lowlevel.checkpoint_if_cancelled` asks sniffio which library runs
    on every call: 1.5 of the 2 µs each async request spent on this check. The public function
    stays the fallback should anyio move its backend lookup."""
    try:
        from anyio._core._eventloop import get_async_backend

        return typing.cast(
            typing.Callable[[], typing.Awaitable[None]],
            get_async_backend("asyncio").checkpoint_if_cancelled,
        )
    except (ImportError, AttributeError, TypeError, LookupError):
        return anyio.lowlevel.checkpoint_if_cancelled


def _asyncio_scope_tasks() -> typing.Any:
    """The dict behind anyio's asyncio backend's task states (weak references to tasks as keys),
    or None if anyio keeps them some other way. A task that is not in it has never entered an
    anyio cancel scope, so anyio's checkpoint would only look it up and return: a membership
    test answers the same without the lookup's raised and caught KeyError (1.5 µs of each async
    request's check, measured). None: the checkpoint is always called."""
    try:
        from anyio._backends._asyncio import _task_states
    except ImportError:
        return None
    store = getattr(_task_states, "data", None)
    return store if isinstance(_task_states, weakref.WeakKeyDictionary) else None


class _Ready:
    """Awaiting it returns None at once, without suspending: what `checkpoint_if_cancelled`
    hands back when there is nothing to check. (An already-done future would do, but it holds
    its loop, and a bridge must not: bridges are the values of a WeakKeyDictionary keyed by
    their loops.)"""

    __slots__ = ()
    __await__ = ().__iter__  # an exhausted iterator: `await` gets None


_READY = typing.cast(typing.Awaitable[None], _Ready())  # typeshed wants a generator


class _Yield:
    """Awaiting it suspends the task for one turn of the event loop, as `asyncio.sleep(0)`
    does (a bare yield, which the task reschedules at once), without making two coroutines."""

    __slots__ = ()
    __await__ = (None,).__iter__  # yields None once


_YIELD = typing.cast(typing.Awaitable[None], _Yield())


def _task_cancel_point(task: asyncio.Task[typing.Any] | None) -> typing.Awaitable[None]:
    """What to await for a plain `task.cancel()` (3.11+) already requested to be delivered:
    one yield, after which the task raises its CancelledError, or nothing."""
    cancelling = getattr(task, "cancelling", None)
    return _YIELD if cancelling is not None and cancelling() else _READY


# `asyncio.current_task(loop)` is a Python function before 3.12 (a frame per call) that reads
# this dict; from 3.12 it is C, and the dict may not be what it reads.
_tasks_by_loop = getattr(asyncio.tasks, "_current_tasks", None)
_current_task: typing.Callable[[asyncio.AbstractEventLoop | None], typing.Any] = (
    _tasks_by_loop.get
    if sys.version_info < (3, 12) and isinstance(_tasks_by_loop, dict)
    else asyncio.current_task
)


class _BridgeBase:
    """What both bridges share: the completion queue, and the rule for a wait that need not
    suspend."""

    def __init__(self) -> None:
        self.queue = _core.CompletionQueue()
        self._woken = 0  # tasks a drain woke that have not run yet (_finished_now)

    def _finished_now(self, pending: _core.PendingTransfer) -> bool:
        """Whether `pending` is finished already, or finishes while the queue spins for it.

        The queue spins (blocking the event loop) only when `pending` is the one transfer in
        flight and at most one task a drain woke is still waiting to run. With 4 or 8 tasks the
        other transfers have often just finished, and a spin for this one held up the tasks
        that would submit the next ones; with 2, holding up the other one costs less than the
        wake-up the spin saves (docs/performance.md, "The event loop's spin")."""
        return pending.finished or (self._woken <= 1 and self.queue.try_spin(pending) is not None)

    def wait(self, pending: _core.PendingTransfer) -> typing.Awaitable[None]:
        """What to await until `pending` is finished: each bridge's own."""
        raise NotImplementedError

    def waiter(self, pending: _core.PendingTransfer) -> typing.Awaitable[None]:
        """What the plain request's path awaits until `pending` is finished; it then reports
        how the wait ended with `waited`. By default `wait`, whose coroutine keeps its own
        count (trio); asyncio's hands out its future and counts in `waited`."""
        return self.wait(pending)

    def waited(
        self,
        pending: _core.PendingTransfer,
        waiter: typing.Awaitable[None],
        exc: BaseException | None = None,
    ) -> None:
        """The wait on `waiter` is over, ended by the drain or by `exc`: nothing to settle
        by default (see _AsyncioBridge.waited)."""


class _AsyncioBridge(_BridgeBase):
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._loop = weakref.ref(loop)
        self._owed: set[_core.Engine] = set()  # engines owed a wake-up (submit)
        self._scope_checkpoint = _asyncio_scope_checkpoint()  # here: sync users never import it
        self._scope_tasks = _asyncio_scope_tasks()
        self._notifier: socket.socket | None = None  # the Proactor loop's (_receive_wake_ups)
        try:
            loop.add_reader(self.queue.fileno(), self._drain)
        except NotImplementedError:
            self._notifier = socket.socket(fileno=self.queue.fileno())
            loop.create_task(self._receive_wake_ups(loop, self._notifier))
        # A loop that is garbage-collected takes its bridge along: cancel what still runs.
        weakref.finalize(loop, _close_queue, self.queue, self._notifier)

    async def _receive_wake_ups(
        self, loop: asyncio.AbstractEventLoop, notifier: socket.socket
    ) -> None:
        """The Proactor loop's add_reader: receive what the loop thread raised, then drain."""
        try:
            while await loop.sock_recv(notifier, 64):
                self._drain()
        except OSError:
            pass  # the queue closed its socket: the loop is going away

    def _drain(self) -> None:
        for pending in self.queue.drain():
            future = pending.waiter
            if future is not None and not future.done():
                future.set_result(None)
                self._woken += 1

    def submit(self, engine: _core.Engine, arguments: EngineArguments) -> _core.PendingTransfer:
        """Hand a request to `engine`. With a few transfers of this loop in flight, the loop
        thread is told at once; with more, the wake-up is deferred to the end of this turn of
        the event loop (`_flush`, scheduled by the first deferred submit), so the tasks that
        one drain woke submit their next requests in one batch. The engine wakes its loop
        thread anyway every DEFER_BATCH deferred submits (commands.c)."""
        if len(self.queue) < _DEFER_FROM_IN_FLIGHT:
            return engine.submit(*arguments, self.queue)
        pending = engine.submit(*arguments, self.queue, True)
        if not self._owed:
            loop = self._loop()
            assert loop is not None  # we are running on it
            loop.call_soon(self._flush)
        self._owed.add(engine)
        return pending

    def _flush(self) -> None:
        owed, self._owed = self._owed, set()
        for engine in owed:
            engine.flush()

    # The two calls below run for every async request. They are plain functions returning
    # what to await, not coroutines: in the common case (no anyio scope, not cancelled; not
    # finished during the spin) they hand back a ready awaitable (_READY, _YIELD) or the
    # one coroutine that must run, so no coroutine is made and resumed just to decide that.

    def checkpoint_if_cancelled(self) -> typing.Awaitable[None]:
        """What to await to raise now if this task is already cancelled, so nothing is sent
        for it."""
        # This bridge's loop is the running one (current_bridge found it): naming it spares
        # current_task() the running-loop lookup, which costs a getpid() system call on 3.11.
        task = _current_task(self._loop())
        scope_tasks = self._scope_tasks
        if task is None or scope_tasks is None or weakref.ref(task) in scope_tasks:
            return self._checkpoint_in_scope(task)  # anyio cancel scopes
        return _task_cancel_point(task)

    async def _checkpoint_in_scope(self, task: asyncio.Task[typing.Any] | None) -> None:
        await self._scope_checkpoint()
        await _task_cancel_point(task)

    def wait(self, pending: _core.PendingTransfer) -> typing.Awaitable[None]:
        """What to await until `pending` is finished. It may be already: a fed body's feeder
        was woken by its end and the queue has let go of it, so no further news would come."""
        if self._finished_now(pending):
            # Finished while we spun (it was the only transfer in flight). Still yield once so
            # a coroutine that loops over requests cannot starve the rest of the event loop.
            return _YIELD
        return self.wait_for_news(pending)

    def waiter(self, pending: _core.PendingTransfer) -> typing.Awaitable[None]:
        """`wait` without a coroutine of its own, for the plain request's path, which awaits
        this itself and then reports how the wait ended with `waited`: one yield if `pending`
        is finished already (as `wait`), else the future the queue's drain resolves. A
        coroutine fewer per request: a frame made, and resumed through, by every request."""
        if self._finished_now(pending):
            return _YIELD
        return self._news_future(pending)

    def _news_future(self, pending: _core.PendingTransfer) -> asyncio.Future[None]:
        """A future the queue's drain resolves when it reports `pending`, registered on it."""
        loop = self._loop()
        assert loop is not None  # we are running on it
        future = loop.create_future()
        pending.waiter = future
        return future

    def waited(
        self,
        pending: _core.PendingTransfer,
        waiter: typing.Awaitable[None],
        exc: BaseException | None = None,
    ) -> None:
        """The wait on `waiter` (from `waiter`) is over: ended by the drain, or by `exc`."""
        if waiter is _YIELD:
            return
        if exc is None:  # the drain resolved the future and woke this task, which runs now
            self._woken -= 1
            return
        future = typing.cast("asyncio.Future[None]", waiter)
        if isinstance(exc, asyncio.CancelledError):
            # Forget the future first: the queue keeps `pending` until the loop thread reports
            # it finished, and a future held there would keep the event loop alive with it.
            pending.waiter = None
            pending.cancel()
        # Woken by a drain (a result set), this task runs now, even when a cancel that came
        # after the result raises here instead.
        if future.done() and not future.cancelled():
            self._woken -= 1

    async def wait_for_news(self, pending: _core.PendingTransfer) -> None:
        """Sleep until the queue reports `pending`: finished, or (a stream) able to go on."""
        future = self._news_future(pending)
        try:
            await future
        except BaseException as exc:
            self.waited(pending, future, exc)
            raise
        self.waited(pending, future)


class _TrioBridge(_BridgeBase):
    def __init__(self) -> None:
        import trio

        super().__init__()
        trio.lowlevel.spawn_system_task(self._run, name="requestx completions")

    async def _run(self) -> None:
        import trio

        try:
            while True:
                await trio.lowlevel.wait_readable(self.queue.fileno())
                self._drain()
        finally:
            # The run is ending (system tasks are cancelled last): stop what still runs.
            self.queue.close()

    def _drain(self) -> None:
        # A function of its own so that no drained transfer stays referenced from _run's frame
        # while it waits for the next wake-up (a cancelled one would keep its body alive).
        import trio

        for pending in self.queue.drain():
            task = pending.waiter
            if task is not None:
                pending.waiter = None
                trio.lowlevel.reschedule(task)
                self._woken += 1

    def submit(self, engine: _core.Engine, arguments: EngineArguments) -> _core.PendingTransfer:
        """Hand a request to `engine`, waking its loop thread at once (trio has no cheap
        "later in this turn" to defer the wake-up to)."""
        return engine.submit(*arguments, self.queue)

    def checkpoint_if_cancelled(self) -> typing.Awaitable[None]:
        """What to await to raise now if this task is already cancelled."""
        import trio

        return trio.lowlevel.checkpoint_if_cancelled()

    def wait(self, pending: _core.PendingTransfer) -> typing.Awaitable[None]:
        """What to await until `pending` is finished (see _AsyncioBridge.wait)."""
        import trio

        if self._finished_now(pending):
            return trio.lowlevel.checkpoint()
        return self.wait_for_news(pending)

    async def wait_for_news(self, pending: _core.PendingTransfer) -> None:
        """Sleep until the queue reports `pending`: finished, or (a stream) able to go on."""
        import trio

        pending.waiter = trio.lowlevel.current_task()

        def abort(_: typing.Any) -> trio.lowlevel.Abort:
            pending.waiter = None
            pending.cancel()
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)
        self._woken -= 1  # rescheduled by a drain (a cancel aborts instead, uncounted)


_Bridge = typing.Union[_AsyncioBridge, _TrioBridge]
_asyncio_bridges: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _AsyncioBridge] = (
    weakref.WeakKeyDictionary()
)
_trio_bridge: typing.Any = None  # trio.lowlevel.RunVar, created on first trio use
_last_asyncio_bridge: _AsyncioBridge | None = None  # current_bridge's shortcut


def current_bridge() -> _Bridge:
    """The bridge of the event loop running this coroutine (created on first use)."""
    # asyncio first and without sniffio: it is the common case and the cheapest test.
    global _last_asyncio_bridge
    loop = asyncio._get_running_loop()
    if loop is not None:
        # The last bridge found, if it is this loop's: no WeakKeyDictionary lookup (a Python
        # method call and a weak reference made per request). Its weak reference to its loop
        # makes the test safe across loops and threads: a bridge is returned only for its loop.
        bridge = _last_asyncio_bridge
        if bridge is not None and bridge._loop() is loop:
            return bridge
        bridge = _asyncio_bridges.get(loop)
        if bridge is None:
            _close_bridges_of_closed_loops()
            bridge = _asyncio_bridges[loop] = _AsyncioBridge(loop)
        _last_asyncio_bridge = bridge
        return bridge
    library = sniffio.current_async_library()
    if library == "trio":
        return _current_trio_bridge()
    raise RuntimeError(f"requestx.AsyncClient does not support the {library!r} event loop")


def _close_queue(queue: _core.CompletionQueue, notifier: socket.socket | None) -> None:
    """Close a bridge's queue. Its notifier socket belongs to the queue, which closes it: the
    Python socket object made for the Proactor loop lets go of it first, so that the handle is
    not closed twice."""
    if notifier is not None:
        notifier.detach()
    queue.close()


def _close_bridges_of_closed_loops() -> None:
    """asyncio has no hook for a loop closing; a loop that is closed but still referenced would
    keep its queue (an eventfd, maybe cancelled transfers) until collected. Whenever a new
    loop gets a bridge, bridges of closed loops are closed."""
    for loop, bridge in list(_asyncio_bridges.items()):
        if loop.is_closed():
            _close_queue(bridge.queue, bridge._notifier)
            del _asyncio_bridges[loop]


def _current_trio_bridge() -> _TrioBridge:
    global _trio_bridge
    import trio

    if _trio_bridge is None:
        _trio_bridge = trio.lowlevel.RunVar("requestx_bridge")
    try:
        return typing.cast(_TrioBridge, _trio_bridge.get())
    except LookupError:
        bridge = _TrioBridge()
        _trio_bridge.set(bridge)
        return bridge
