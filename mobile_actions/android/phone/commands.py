"""Device commands of the virtual phone (``am``, ``input``, ``svc``, ``cmd``, ``settings``, ...).

Each takes the already-split argv list (the shell did the parsing) and writes to ``io``; output and
exit codes follow what a stock Android 14 phone prints, closely enough for adbutils and for humans.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from mobile_actions.android.phone import render
from mobile_actions.android.phone.apps import APP_BY_PACKAGE
from mobile_actions.android.phone.core import keycode
from mobile_actions.android.phone.shell import IO
from mobile_actions.android.phone.state import DENSITY, HEIGHT, WIDTH, Intent

if TYPE_CHECKING:  # pragma: no cover
    from mobile_actions.android.phone.core import VirtualPhone

COMMANDS: dict[str, Callable[[IO, list[str]], int]] = {}


def command(*names: str):
    def deco(fn):
        for n in names:
            COMMANDS[n] = fn
        return fn
    return deco


def phone_of(io: IO) -> "VirtualPhone":
    return io.shell.phone  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------- am / monkey
class _Usage(Exception):
    pass


def parse_intent(args: list[str]) -> Intent:
    """``am start`` options -> Intent. Values are taken whole (never re-split), as Android's am does."""
    it = Intent()
    i = 0

    def value() -> str:
        nonlocal i
        if i >= len(args):
            raise _Usage(f"Error: No argument for option {args[i - 1]}")
        v = args[i]
        i += 1
        return v

    while i < len(args):
        opt = args[i]
        i += 1
        if opt == "-a":
            it.action = value()
        elif opt == "-d":
            it.data = value()
        elif opt == "-t":
            it.mime = value()
        elif opt == "-n":
            it.component = value()
        elif opt == "-c":
            it.categories.append(value())
        elif opt == "-f":
            v = value()
            try:
                it.flags = int(v, 0)
            except ValueError:
                raise _Usage(f"Error: bad flags: {v}") from None
        elif opt in ("-e", "--es"):
            k = value()
            it.extras[k] = value()
        elif opt == "--esn":
            it.extras[value()] = None
        elif opt in ("--ei", "--el"):
            k, v = value(), value()
            try:
                it.extras[k] = int(v)
            except ValueError:
                raise _Usage(f"Error: invalid number for {opt} {k}: {v}") from None
        elif opt == "--ef" or opt == "--ed":
            k, v = value(), value()
            try:
                it.extras[k] = float(v)
            except ValueError:
                raise _Usage(f"Error: invalid float for {opt} {k}: {v}") from None
        elif opt == "--ez":
            k, v = value(), value().lower()
            if v not in ("true", "false", "t", "f", "1", "0"):
                raise _Usage(f"Error: invalid boolean for --ez {k}: {v}")
            it.extras[k] = v in ("true", "t", "1")
        elif opt in ("--eu", "--ecn"):
            k = value()
            it.extras[k] = value()
        elif opt in ("--esa", "--eia", "--ela", "--esal", "--eial", "--elal"):
            k, v = value(), value()
            items = [s.replace("\\,", ",") for s in _split_commas(v)]
            try:
                it.extras[k] = items if opt.startswith("--es") else [int(x) for x in items]
            except ValueError:
                raise _Usage(f"Error: invalid number in {opt} {k}: {v}") from None
        elif opt in ("-W", "-S", "-D", "-N", "-R", "--activity-clear-task", "--activity-new-task",
                     "--activity-clear-top", "--activity-single-top", "--grant-read-uri-permission",
                     "--grant-write-uri-permission", "--receiver-foreground", "--include-stopped-packages"):
            continue
        elif opt in ("--user", "--display", "--windowingMode", "--activityType", "--start-profiler", "-P",
                     "--sampling", "--attach-agent"):
            value()
        elif not opt.startswith("-") and it.data is None and i == len(args):
            it.data = opt   # a trailing URI
        else:
            raise _Usage(f"Error: Unknown option: {opt}")
    return it


def _split_commas(v: str) -> list[str]:
    out, cur, esc = [], [], False
    for ch in v:
        if ch == "," and not esc:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        esc = ch == "\\" and not esc
    out.append("".join(cur))
    return out


@command("am")
def am(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    if len(argv) < 2:
        io.out("Activity manager (activity) commands:\n  start [options] INTENT\n  force-stop PACKAGE\n")
        return 0
    sub, args = argv[1], argv[2:]
    if sub in ("start", "start-activity"):
        try:
            it = parse_intent(args)
        except _Usage as e:
            io.err(f"{e}\n")
            return 1
        io.out(f"Starting: {it.describe()}\n")
        component = phone.start_intent(it)
        if component is None:
            io.err(f"Error: Activity not started, unable to resolve {it.describe()[:-2]} flg=0x10000000 }}\n")
            return 1
        if "-W" in args:
            io.out(f"Status: ok\nLaunchState: WARM\nActivity: {component}\nTotalTime: 42\nWaitTime: 45\nComplete\n")
        return 0
    if sub == "force-stop" and args:
        phone.force_stop(args[-1])
        return 0
    if sub == "broadcast":
        try:
            it = parse_intent(args)
        except _Usage as e:
            io.err(f"{e}\n")
            return 1
        io.out(f"Broadcasting: {it.describe()}\nBroadcast completed: result=0\n")
        return 0
    io.err(f"Unknown command: {sub}\n")
    return 255


@command("monkey")
def monkey(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    packages = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-p"]
    if not packages:
        io.err("** No activities found to run, monkey aborted.\n")
        return 252
    if not phone.launch(packages[0]):
        io.err("** No activities found to run, monkey aborted.\n")
        return 252
    io.out("  bash arg: -p\n  bash arg: " + packages[0] + "\nEvents injected: 1\n## Network stats: elapsed time=12ms\n")
    return 0


# --------------------------------------------------------------------------------------- input
INPUT_SOURCES = {"touchscreen", "keyboard", "mouse", "trackball", "dpad", "stylus", "gamepad", "touchpad",
                 "joystick", "touchnavigation", "rotaryencoder", "keypad"}
INPUT_USAGE = ("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\nThe commands and default sources are:\n"
               "      text <string> (Default: keyboard)\n      keyevent [--longpress|--doubletap] <key code number or name> ...\n"
               "      tap <x> <y> (Default: touchscreen)\n      swipe <x1> <y1> <x2> <y2> [duration(ms)]\n")


@command("input")
def input_(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    args = argv[1:]
    if args and args[0] in INPUT_SOURCES:
        args = args[1:]
    if len(args) >= 2 and args[0] == "-d":
        args = args[2:]
    if not args:
        io.err(INPUT_USAGE)
        return 1
    sub, rest = args[0], args[1:]
    try:
        if sub == "text" and rest:
            phone.type_text(" ".join(rest).replace("%s", " "))
        elif sub == "keyevent" and rest:
            codes = []
            for name in (a for a in rest if not a.startswith("--")):
                code = keycode(name)
                if code is None:
                    io.err(f"Error: Unknown keycode: {name}\n")
                    return 1
                codes.append(code)
            for code in codes:
                phone.key(code)
        elif sub == "tap" and len(rest) == 2:
            phone.tap(float(rest[0]), float(rest[1]))
        elif sub in ("swipe", "draganddrop") and len(rest) in (4, 5):
            x1, y1, x2, y2 = (float(v) for v in rest[:4])
            phone.swipe(x1, y1, x2, y2, float(rest[4]) if len(rest) == 5 else 300.0)
        elif sub == "press":
            phone.tap(WIDTH / 2, HEIGHT / 2)
        else:
            io.err(f"Error: Invalid arguments for command: {sub}\n" + INPUT_USAGE)
            return 1
    except ValueError as e:
        io.err(f"Error: {e}\n")
        return 1
    return 0


# --------------------------------------------------------------------------------------- system services
@command("svc")
def svc(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    if len(argv) >= 3 and argv[1] == "wifi" and argv[2] in ("enable", "disable"):
        phone.set_wifi(argv[2] == "enable")
        return 0
    if len(argv) >= 3 and argv[1] == "bluetooth" and argv[2] in ("enable", "disable"):
        phone.set_flag("bluetooth", argv[2] == "enable")
        return 0
    if len(argv) >= 3 and argv[1] == "power" and argv[2] == "stayon":
        return 0
    io.out("Available commands:\n    help\n    power\n    data\n    wifi\n    usb\n    nfc\n    bluetooth\n")
    return 0


@command("cmd")
def cmd(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    args = argv[1:]
    if not args:
        io.err("cmd: No service specified; use -l to list all running services.\n")
        return 20
    service, rest = args[0], args[1:]
    if service == "wifi":
        if rest[:1] == ["set-wifi-enabled"] and rest[1:2] in (["enabled"], ["disabled"]):
            phone.set_wifi(rest[1] == "enabled")
            return 0
        if rest[:1] == ["status"]:
            io.out("Wifi is enabled\n" if phone.state.wifi else "Wifi is disabled\n")
            return 0
    elif service == "statusbar":
        if rest[:1] == ["expand-settings"]:
            phone.expand_settings()
            return 0
        if rest[:1] == ["expand-notifications"]:
            phone.expand_notifications()
            return 0
        if rest[:1] == ["collapse"]:
            phone.collapse()
            return 0
        if rest[:1] == ["click-tile"]:
            # A built-in Quick Settings tile cannot be clicked this way on a stock phone: no effect.
            return 0
    elif service == "clipboard" and rest[:1] == ["get"]:
        io.out(phone.state.clipboard + "\n")
        return 0
    elif service in ("package", "activity", "settings"):
        mapping = {"package": pm, "activity": am, "settings": settings}
        return mapping[service](io, [service, *rest])
    else:
        io.err(f"cmd: Can't find service: {service}\n")
        return 20
    io.err(f"Unknown command: {' '.join(rest)}\n")
    return 255


@command("settings")
def settings(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) < 2 or args[1] not in ("system", "secure", "global"):
        io.err("Invalid command: settings [--user NUM] get|put|delete|list NAMESPACE [KEY [VALUE]]\n")
        return 1
    verb, ns, rest = args[0], args[1], args[2:]
    table = phone.state.settings[ns]
    with phone.lock:
        if verb == "get" and rest:
            io.out(table.get(rest[0], "null") + "\n")
        elif verb == "put" and len(rest) >= 2:
            table[rest[0]] = rest[1]
            if (ns, rest[0]) == ("global", "wifi_on"):
                phone.set_wifi(rest[1] == "1")
            elif (ns, rest[0]) == ("global", "airplane_mode_on"):
                phone.set_flag("airplane", rest[1] == "1")
            elif (ns, rest[0]) == ("global", "zen_mode"):
                phone.set_dnd(rest[1] not in ("", "0"))
            elif (ns, rest[0]) == ("system", "screen_brightness") and rest[1].isdigit():
                phone.set_level("brightness", round(min(255, int(rest[1])) * 100 / 255))
            phone.changed()
        elif verb == "delete" and rest:
            io.out(f"Deleted {int(table.pop(rest[0], None) is not None)} rows\n")
        elif verb == "list":
            io.out("".join(f"{k}={v}\n" for k, v in sorted(table.items())))
        else:
            io.err("Invalid command\n")
            return 1
    return 0


@command("pm")
def pm(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    args = argv[1:]
    packages = sorted(APP_BY_PACKAGE)
    if args[:2] == ["list", "packages"]:
        filt = [a for a in args[2:] if not a.startswith("-")]
        io.out("".join(f"package:{p}\n" for p in packages if not filt or filt[0] in p))
        return 0
    if args[:1] == ["path"] and len(args) == 2:
        if args[1] in APP_BY_PACKAGE:
            io.out(f"package:/data/app/{args[1]}/base.apk\n")
            return 0
        return 1
    if args[:1] == ["clear"] and len(args) >= 2:
        if phone.clear_app(args[-1]):
            io.out("Success\n")
            return 0
        io.out("Failed\n")
        return 1
    io.err(f"Unknown command: {' '.join(args)}\n")
    return 1


PROPS = {
    "ro.product.manufacturer": "MobileActions", "ro.product.brand": "mobileactions", "ro.build.version.release": "14",
    "ro.build.version.sdk": "34", "ro.product.cpu.abi": "x86_64", "ro.sf.lcd_density": str(DENSITY),
    "ro.build.type": "user", "ro.debuggable": "0", "ro.secure": "1", "sys.boot_completed": "1",
}


def props(phone: "VirtualPhone") -> dict[str, str]:
    out = dict(PROPS)
    out.update({"ro.product.model": phone.state.model, "ro.product.name": "vphone", "ro.product.device": "vphone",
                "ro.serialno": phone.state.serial, "persist.sys.timezone": phone.state.timezone})
    return out


@command("getprop")
def getprop(io: IO, argv: list[str]) -> int:
    table = props(phone_of(io))
    if len(argv) == 1:
        io.out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(table.items())))
    else:
        io.out(table.get(argv[1], argv[2] if len(argv) > 2 else "") + "\n")
    return 0


@command("wm")
def wm(io: IO, argv: list[str]) -> int:
    if argv[1:2] == ["size"]:
        io.out(f"Physical size: {WIDTH}x{HEIGHT}\n")
    elif argv[1:2] == ["density"]:
        io.out(f"Physical density: {DENSITY}\n")
    else:
        io.err("Unknown command\n")
        return 1
    return 0


@command("dumpsys")
def dumpsys(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    st = phone.state
    what = argv[1] if len(argv) > 1 else ""
    comp = phone.current_component()
    if what == "mobile-actions":
        io.out(phone.state_json() + "\n")
    elif what == "window":
        io.out(f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus=Window{{5c1d0e7 u0 {comp}}}\n"
               f"  mFocusedApp=ActivityRecord{{8a1f2b0 u0 {comp} t12}}\n")
    elif what == "activity":
        if argv[2:3] == ["top"]:
            io.out(f"TASK 12 id=12\n  ACTIVITY {comp} 3f2a1b pid=4242\n")
        else:
            io.out(f"  mResumedActivity: ActivityRecord{{8a1f2b0 u0 {comp} t12}}\n")
    elif what == "battery":
        io.out(f"Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  Wireless powered: false\n"
               f"  status: 2\n  health: 2\n  present: true\n  level: {st.battery}\n  scale: 100\n"
               f"  voltage: 4123\n  temperature: 251\n  technology: Li-ion\n")
    elif what == "power":
        io.out(f"POWER MANAGER (dumpsys power)\n  mWakefulness={'Awake' if st.screen_on else 'Asleep'}\n"
               f"  mHoldingDisplaySuspendBlocker={'true' if st.screen_on else 'false'}\n")
    elif what == "display":
        io.out(f"DISPLAY MANAGER (dumpsys display)\n  mDefaultViewport=DisplayViewport{{orientation=0, "
               f"deviceWidth={WIDTH}, deviceHeight={HEIGHT}}}\n  mCurrentOrientation=0\n")
    elif what == "":
        io.out("Currently running services:\n  activity\n  battery\n  display\n  mobile-actions\n  power\n  window\n")
    else:
        io.err(f"Can't find service: {what}\n")
    return 0


@command("vphone")
def vphone(io: IO, argv: list[str]) -> int:
    """The virtual phone's own control: ``vphone state`` (JSON) and ``vphone reset``."""
    phone = phone_of(io)
    sub = argv[1] if len(argv) > 1 else "state"
    if sub == "state":
        io.out(phone.state_json() + "\n")
    elif sub == "reset":
        phone.reset()
    else:
        io.err("usage: vphone state|reset\n")
        return 2
    return 0


# --------------------------------------------------------------------------------------- screen capture
@command("screencap")
def screencap(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    args = [a for a in argv[1:] if a != "-p"]
    png = "-p" in argv[1:] or (args and args[-1].endswith(".png"))
    if "-d" in args:
        i = args.index("-d")
        args = args[:i] + args[i + 2:]
    data = phone.cached("png", render.png) if png else render.raw(phone)
    if args:
        if not phone.fs.write(args[-1], data):
            io.err(f"Error opening file: {args[-1]} (No such file or directory)\n")
            return 1
    else:
        io.out(data)
    return 0


@command("uiautomator")
def uiautomator(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    if argv[1:2] != ["dump"]:
        io.err("Usage: uiautomator <subcommand> [options]\n    dump [--compressed] [file]\n")
        return 1
    args = [a for a in argv[2:] if not a.startswith("--")]
    path = args[0] if args else "/sdcard/window_dump.xml"
    xml = phone.cached("xml", render.ui_xml).encode("utf-8")
    if path == "/dev/tty":
        io.out(xml)
        io.out("UI hierchary dumped to: /dev/tty\n")
        return 0
    if not phone.fs.write(path, xml):
        io.err(f"ERROR: could not write {path}\n")
        return 1
    io.out(f"UI hierchary dumped to: {path}\n")
    return 0


# --------------------------------------------------------------------------------------- files and misc
@command("ls")
def ls(io: IO, argv: list[str]) -> int:
    fs = phone_of(io).fs
    paths = [a for a in argv[1:] if not a.startswith("-")] or ["/"]
    code = 0
    for p in paths:
        names = fs.listdir(p)
        if names is not None:
            io.out("".join(n + "\n" for n in names))
        elif fs.read(p) is not None:
            io.out(p + "\n")
        else:
            io.err(f"ls: {p}: No such file or directory\n")
            code = 1
    return code


@command("cat")
def cat(io: IO, argv: list[str]) -> int:
    fs = phone_of(io).fs
    if len(argv) == 1:
        io.out(io.stdin)
        return 0
    code = 0
    for p in argv[1:]:
        data = fs.read(p)
        if data is None:
            io.err(f"cat: {p}: No such file or directory\n")
            code = 1
        else:
            io.out(data)
    return code


@command("rm")
def rm(io: IO, argv: list[str]) -> int:
    fs = phone_of(io).fs
    force = any(a.startswith("-") and "f" in a for a in argv[1:])
    code = 0
    for p in (a for a in argv[1:] if not a.startswith("-")):
        if not fs.remove(p) and not force:
            io.err(f"rm: {p}: No such file or directory\n")
            code = 1
    return code


@command("touch")
def touch(io: IO, argv: list[str]) -> int:
    fs = phone_of(io).fs
    for p in (a for a in argv[1:] if not a.startswith("-")):
        if fs.read(p) is None and not fs.write(p, b""):
            io.err(f"touch: '{p}': No such file or directory\n")
            return 1
    return 0


@command("mkdir")
def mkdir(io: IO, argv: list[str]) -> int:
    io.err("mkdir: Read-only file system\n") if len(argv) > 1 and not any(a == "-p" for a in argv) else None
    return 0


@command("id")
def id_(io: IO, argv: list[str]) -> int:
    io.out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw)\n")
    return 0


@command("whoami")
def whoami(io: IO, argv: list[str]) -> int:
    io.out("shell\n")
    return 0


@command("date")
def date(io: IO, argv: list[str]) -> int:
    phone = phone_of(io)
    if argv[1:2] == ["+%s"]:
        io.out(f"{int(phone.now().timestamp())}\n")
    else:
        io.out(phone.now().strftime("%a %b %d %H:%M:%S %Z %Y") + "\n")
    return 0


@command("sleep")
def sleep(io: IO, argv: list[str]) -> int:
    # No real sleeping: one stream must not stall its transport (and tests must stay fast).
    return 0


@command("log", "logcat")
def log(io: IO, argv: list[str]) -> int:
    return 0


@command("printf")
def printf(io: IO, argv: list[str]) -> int:
    if len(argv) > 1:
        fmt = argv[1].replace("\\n", "\n").replace("\\t", "\t")
        try:
            io.out(fmt % tuple(argv[2:]) if "%" in fmt and len(argv) > 2 else fmt)
        except (TypeError, ValueError):
            io.out(fmt)
    return 0


@command("reboot")
def reboot(io: IO, argv: list[str]) -> int:
    io.err("reboot: Operation not permitted\n")
    return 1

