"""Looking into a process's live hub from a test."""

from __future__ import annotations

from uuid import UUID

from service.live import LiveHub


def wait_listening(hub: LiveHub, timeout: float) -> bool:
    """Wait until the hub's LISTEN connection is up; whether it is."""
    listener = hub._listener
    return listener is not None and listener.connected.wait(timeout)


def streams_of(hub: LiveHub, match_id: UUID) -> int:
    """The streams of ``match_id`` open in this hub."""
    channel = hub._channels.get(match_id)
    return channel.followers if channel is not None else 0
