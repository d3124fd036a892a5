"""A virtual Android phone that speaks adbd's wire protocol (see docs/android.md).

``VirtualPhone`` holds the state and applies intents and input; ``PhoneServer`` makes it reachable
by the real adb server (``adb connect 127.0.0.1:PORT``).
"""

from mobile_actions.android.phone.core import VirtualPhone
from mobile_actions.android.phone.server import DEFAULT_PORT, PhoneServer, PhoneServerError

__all__ = ["VirtualPhone", "PhoneServer", "PhoneServerError", "DEFAULT_PORT"]
