"""Latency of one dispatched call through the real adb server, several ways (``mobile-actions bench android``).

Starts a private adb server and a virtual phone, connects them, and times one ``show_map`` intent
(``am start -a VIEW -d geo:...``) per path: adbutils by serial, adbutils by transport id, our
``Device.shell`` (raw host protocol, shell v2, no close sleep), a full ``dispatch()`` (validation +
plan + shell), the ``adb`` command line, and the phone's shell in-process (no adb at all).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from typing import Callable

ARGV = ["am", "start", "-a", "android.intent.action.VIEW", "-d", "geo:0,0?q=Louvre"]


def measure(fn: Callable[[], object], runs: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def run_bench(runs: int = 100, cli_runs: int = 20) -> list[tuple[str, list[float]]]:
    from mobile_actions.android.adbserver import PrivateAdbServer, adb_binary
    from mobile_actions.android.bindings import load_bindings
    from mobile_actions.android.device import ServerAddress, select_device
    from mobile_actions.android.dispatch import dispatch
    from mobile_actions.android.phone import PhoneServer, VirtualPhone
    from mobile_actions.calls import ToolCall
    from mobile_actions.catalog import load_catalogue

    phone = VirtualPhone()
    with PhoneServer(phone, "127.0.0.1", 0) as ps, PrivateAdbServer() as srv:
        serial = ps.address.serial
        srv.connect(serial)
        client = srv.client()
        device = select_device(serial, server=ServerAddress(port=srv.port), env={})
        by_serial = client.device(serial=serial)
        by_tid = client.device(transport_id=device.info.transport_id)
        catalogue, bindings = load_catalogue(), load_bindings()
        call = ToolCall("show_map", {"query": "Louvre"})
        adb = [adb_binary(), "-P", str(srv.port), "-s", serial, "shell", *ARGV]
        rows = [
            ("in-process phone shell (no adb)", measure(lambda: phone.run(" ".join(ARGV)), runs)),
            ("adbutils shell(), device by serial", measure(lambda: by_serial.shell(ARGV), runs)),
            ("adbutils shell(), device by transport_id", measure(lambda: by_tid.shell(ARGV), runs)),
            ("adbutils shell2() (exit code), by transport_id", measure(lambda: by_tid.shell2(ARGV), runs)),
            ("mobile_actions Device.shell (raw, v2, no sleep)", measure(lambda: device.shell(ARGV), runs)),
            ("mobile_actions dispatch(show_map) end to end",
             measure(lambda: dispatch(call, device, bindings=bindings, catalogue=catalogue), runs)),
            ("adb command line (subprocess)",
             measure(lambda: subprocess.run(adb, env=srv.env, capture_output=True, check=True), cli_runs, 1)),
        ]
    return rows


def format_table(rows: list[tuple[str, list[float]]]) -> str:
    lines = ["| path | median ms | p90 ms | runs |", "|---|---:|---:|---:|"]
    for name, xs in rows:
        p90 = statistics.quantiles(xs, n=10)[-1] if len(xs) >= 10 else max(xs)
        lines.append(f"| {name} | {statistics.median(xs):.2f} | {p90:.2f} | {len(xs)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cli-runs", type=int, default=20)
    args = parser.parse_args(argv)
    print(format_table(run_bench(args.runs, args.cli_runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
