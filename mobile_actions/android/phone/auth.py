"""adb's RSA AUTH, device side, stdlib only: verify the host's signature against allowed keys.

Why: a phone listening on a non-loopback address must not accept commands from anyone who can reach
it. Like adbd, we send a 20-byte random token; the adb server signs it with ``~/.android/adbkey``
(PKCS#1 v1.5, the token treated as a SHA-1 digest); we accept if any key in the allowed file
(``adbkey.pub`` format, one per line) verifies it. Unknown keys are never added: that host stays
``unauthorized``.
"""

from __future__ import annotations

import base64
import binascii
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from mobile_actions.errors import AuthKeyError

TOKEN_SIZE = 20
SHA1_DIGEST_INFO = bytes.fromhex("3021300906052b0e03021a05000414")


@dataclass(frozen=True)
class PublicKey:
    n: int
    e: int
    comment: str = ""

    @property
    def size(self) -> int:
        return (self.n.bit_length() + 7) // 8

    def verify(self, token: bytes, signature: bytes) -> bool:
        if len(signature) != self.size:
            return False
        m = pow(int.from_bytes(signature, "big"), self.e, self.n).to_bytes(self.size, "big")
        suffix = SHA1_DIGEST_INFO + token
        expected = b"\x00\x01" + b"\xff" * (self.size - 3 - len(suffix)) + b"\x00" + suffix
        return m == expected


def parse_key(line: str) -> PublicKey:
    """One ``adbkey.pub`` line: base64 of {len words, n0inv, n[], rr[], e} little-endian, then a comment."""
    blob_text, _, comment = line.strip().partition(" ")
    try:
        blob = base64.b64decode(blob_text, validate=True)
        (words,) = struct.unpack_from("<I", blob, 0)
        nbytes = words * 4
        if words == 0 or len(blob) != 8 + 2 * nbytes + 4:
            raise AuthKeyError(f"not an adb public key (length {len(blob)})")
        n = int.from_bytes(blob[8:8 + nbytes], "little")
        (e,) = struct.unpack_from("<I", blob, 8 + 2 * nbytes)
    except (binascii.Error, struct.error) as err:
        raise AuthKeyError(f"not an adb public key: {err}") from None
    return PublicKey(n, e, comment)


def load_keys(path: str | Path) -> tuple[PublicKey, ...]:
    p = Path(path).expanduser()
    try:
        lines = [ln for ln in p.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    except OSError as err:
        raise AuthKeyError(f"{p}: {err.strerror}") from None
    keys = []
    for i, ln in enumerate(lines, 1):
        try:
            keys.append(parse_key(ln))
        except AuthKeyError as err:
            raise AuthKeyError(f"{p}:{i}: {err}") from None
    if not keys:
        raise AuthKeyError(f"{p}: no keys")
    return tuple(keys)


class KeyAuthenticator:
    """Per-connection AUTH state for ``protocol.Connection``."""

    def __init__(self, keys: tuple[PublicKey, ...]) -> None:
        self.keys = keys
        self.token = b""
        self.verified = False
        self.attempts = 0

    def new_token(self) -> bytes:
        self.token = os.urandom(TOKEN_SIZE)
        return self.token

    def check(self, signature: bytes) -> bool:
        self.attempts += 1
        if self.attempts > 16 or not self.token:
            return False
        self.verified = any(k.verify(self.token, signature) for k in self.keys)
        return self.verified
