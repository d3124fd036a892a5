"""``mobile-actions phone`` and ``mobile-actions dispatch``: parse arguments, call the library, print."""

from __future__ import annotations

import argparse
import sys
import time

from mobile_actions.cli import ask_on_tty


def register(subparsers) -> None:
    p = subparsers.add_parser("phone", help="run the virtual phone (an adb device on 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="TCP port (default 15555; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (non-loopback needs --adb-keys or --insecure)")
    p.add_argument("--adb-keys", help="allowed adb public keys (adbkey.pub format): require adb's RSA AUTH")
    p.add_argument("--insecure", action="store_true", help="allow a non-loopback address without AUTH")
    p.add_argument("--timezone", default="UTC", help="the phone's time zone (persist.sys.timezone)")
    p.add_argument("--connect", action="store_true", help="also run 'adb connect' against the adb server")
    p.set_defaults(func=cmd_phone)

    p = subparsers.add_parser("dispatch", help="run validated tool calls on an Android device")
    p.add_argument("calls", help="a call as JSON ({\"name\": ..., \"arguments\": {...}}), a list of calls, or - for stdin")
    p.add_argument("--tools", default="mobile_actions", help="catalogue name or JSON file (default mobile_actions)")
    p.add_argument("--bindings", default=None, help="Android bindings name or file (default: <tools>.android.json)")
    p.add_argument("--serial", help="device serial (default $ANDROID_SERIAL, else the only device)")
    p.add_argument("--dry-run", action="store_true", help="print the exact device commands; run nothing")
    p.add_argument("--yes", action="store_true", help="do not ask before a call that changes the phone or sends something (the tool's x-effect in the catalogue: none | changes | sends; without it, read from its name) nor before a navigator tap on a send/delete-type button; calls the request does not ask for are refused even so")
    p.add_argument("--tz", help="time zone for datetimes (default: the device's, else UTC)")
    p.set_defaults(func=cmd_dispatch)


def cmd_phone(args: argparse.Namespace) -> int:
    from mobile_actions.android.phone.core import VirtualPhone
    from mobile_actions.android.phone.server import (
        DEFAULT_PORT,
        PhoneServer,
        PhoneServerError,
    )

    port = DEFAULT_PORT if args.port is None else args.port
    try:
        server = PhoneServer(VirtualPhone(tz=args.timezone), args.host, port, adb_keys=args.adb_keys,
                             insecure=args.insecure).start()
    except (PhoneServerError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    serial = server.address.serial
    print(f"virtual phone listening on {serial}", flush=True)
    print(f"  connect:   adb connect {serial}")
    print(f"  dispatch:  mobile-actions dispatch --serial {serial} "
          "'{\"name\": \"show_map\", \"arguments\": {\"query\": \"Louvre\"}}'")
    print(f"  screen:    adb -s {serial} exec-out screencap -p > s.png")
    print(f"  state:     adb -s {serial} shell dumpsys mobile-actions")
    print("Ctrl-C to stop.", flush=True)
    if args.connect:
        try:
            import adbutils
            print(adbutils.AdbClient().connect(serial, timeout=10), flush=True)
        except Exception as e:  # the phone is still useful without it
            print(f"adb connect failed: {e}", file=sys.stderr)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def _read_calls(text: str):
    from mobile_actions import jsontext
    from mobile_actions.calls import calls_from_json
    data = jsontext.loads(sys.stdin.read() if text == "-" else text)
    return calls_from_json(data if isinstance(data, list) else [data], "calls")


def cmd_dispatch(args: argparse.Namespace) -> int:
    from mobile_actions.android.bindings import (
        BindingError,
        default_bindings_for,
        load_bindings,
    )
    from mobile_actions.android.device import DeviceError, select_device
    from mobile_actions.android.dispatch import DispatchError, dispatch
    from mobile_actions.catalog import CatalogueError, load_catalogue

    try:
        calls = _read_calls(args.calls)
        catalogue = load_catalogue(args.tools)
        bindings = load_bindings(args.bindings or default_bindings_for(args.tools))
        bindings.check_against(catalogue)
    except (ValueError, CatalogueError, BindingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    device = None
    try:
        device = select_device(args.serial)
    except DeviceError as e:
        if not args.dry_run:
            print(f"error: {e}", file=sys.stderr)
            return 3
        print(f"# no device ({e.__class__.__name__}); datetimes use {args.tz or 'UTC'}", file=sys.stderr)

    confirm = ask_on_tty(args.yes)

    def ask(plan) -> bool:
        return confirm(f"{plan.tool} will run on {device.serial}", plan.describe())

    for call in calls:
        try:
            result = dispatch(call, device, bindings=bindings, catalogue=catalogue, confirm=ask, tz=args.tz,
                              dry_run=args.dry_run)
        except (DispatchError, DeviceError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        if args.dry_run:
            print(f"# {call.name} (route: {result.plan.route}{', needs confirmation' if result.plan.confirm else ''})")
            for line in result.plan.describe():
                print(line)
        else:
            notes = [o.note for o in result.outcomes if o.note]
            print(f"{call.name}: done on {device.serial}" + (f" ({'; '.join(notes)})" if notes else ""))
    return 0

