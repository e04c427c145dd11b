"""What the application reports as it works, for metrics; this default reports nothing.

Called after the fact and must not fail: ``action_applied`` once per action in a
successful append (``by`` is "person" or "computer"), ``bot_decided`` once per move the
computer chooses, with the seconds it took, ``stream_refused`` once per live stream
refused for a limit (``scope``: token, client address, process), ``webhook_attempted``
once per webhook attempt (``outcome``: delivered, retried, failed; ``lag``: for a
delivery, the seconds since its notification was made), ``replica_read`` once per read
meant for a standby (``outcome``: ``service.store.replica.OUTCOMES``; ``waited``: the
seconds it waited for the standby to catch up).
"""

from __future__ import annotations


class Hooks:
    def action_applied(self, action_type: str, by: str) -> None:
        pass

    def bot_decided(self, level: str, seconds: float) -> None:
        pass

    def stream_refused(self, scope: str) -> None:
        pass

    def webhook_attempted(self, outcome: str, lag: float | None) -> None:
        pass

    def replica_read(self, outcome: str, waited: float) -> None:
        pass
