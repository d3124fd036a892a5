"""Dispatch: plans as argv lists, validation first, confirmation, each tool end to end, device errors."""

import json
import subprocess
import sys
import time

import pytest

from mobile_actions.android.bindings import BindingError, Bindings, load_bindings
from mobile_actions.android.device import (DeviceDisconnectedError, DeviceNotFoundError, DeviceOfflineError,
                                           DeviceUnauthorizedError, MultipleDevicesError, NoDeviceError,
                                           ServerAddress, select_device)
from mobile_actions.android.dispatch import (ArgumentError, ConfirmationRequired, InvalidCallError, dispatch,
                                             epoch_ms, plan)
from mobile_actions.android.phone import PhoneServer, VirtualPhone
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import load_catalogue
from tests.adb_fixtures import fresh, rig  # noqa: F401

CATALOGUE = load_catalogue("mobile_actions")
BINDINGS = load_bindings("mobile_actions")


def test_every_tool_is_bound_and_placeholders_are_parameters():
    BINDINGS.check_against(CATALOGUE)
    assert set(BINDINGS) == set(CATALOGUE.names)
    assert BINDINGS["send_email"].confirm and BINDINGS["turn_on_flashlight"].route == "gui"


def test_plan_substitutes_whole_elements():
    p = plan(ToolCall("create_contact", {"first_name": "Ada", "last_name": "O'Neil; reboot",
                                         "email": "a@b.c"}), BINDINGS)
    assert p.commands == [["am", "start", "-a", "android.intent.action.INSERT", "-t", "vnd.android.cursor.dir/contact",
                           "-e", "name", "Ada O'Neil; reboot", "-e", "email", "a@b.c"]]
    assert p.describe()[0].endswith("-e name 'Ada O'\"'\"'Neil; reboot' -e email a@b.c")


def test_calendar_epoch_ms_in_the_given_zone():
    p = plan(ToolCall("create_calendar_event", {"title": "T", "datetime": "2025-03-14T15:00:00"}), BINDINGS,
             tz="Europe/Paris")
    argv = p.commands[0]
    assert argv[argv.index("beginTime") + 1] == str(epoch_ms("2025-03-14T14:00:00", "UTC"))
    assert int(argv[argv.index("endTime") + 1]) - int(argv[argv.index("beginTime") + 1]) == 3_600_000
    with pytest.raises(ArgumentError):
        epoch_ms("tomorrow", "UTC")


def test_map_query_is_uri_encoded_and_nul_rejected():
    assert plan(ToolCall("show_map", {"query": "A&B #1?"}), BINDINGS).commands[0][-1] == "geo:0,0?q=A%26B%20%231%3F"
    with pytest.raises(ArgumentError):
        plan(ToolCall("send_email", {"to": "a@b.c", "subject": "a\0b"}), BINDINGS)


@pytest.mark.parametrize("data, message", [
    ({"tools": {"x": {"steps": [{"shell": ["{cmd}"]}]}}}, "command name"),
    ({"tools": {"x": {"steps": [{"shell": ["am", "{a|eval}"]}]}}}, "unknown filter"),
    ({"tools": {"x": {"steps": [{"shell": ["am", "{a"]}]}}}, "stray"),
    ({"tools": {"x": {"route": "teleport", "steps": [{"shell": ["am"]}]}}}, "route"),
    ({"tools": {"x": {"steps": []}}}, "non-empty"),
])
def test_bad_bindings_are_rejected(data, message):
    with pytest.raises(BindingError, match=message):
        Bindings.from_json(data)


def test_invalid_call_is_never_dispatched(fresh):
    fresh.phone.clear_log()
    with pytest.raises(InvalidCallError):
        dispatch(ToolCall("show_map", {}), fresh.device, bindings=BINDINGS, catalogue=CATALOGUE)
    with pytest.raises(InvalidCallError):
        dispatch(ToolCall("create_calendar_event", {"title": "x", "datetime": "2025-02-30T10:00:00"}), fresh.device,
                 bindings=BINDINGS, catalogue=CATALOGUE)
    assert fresh.phone.state.commands == []


def test_send_needs_confirmation(fresh):
    call = ToolCall("send_email", {"to": "bob@example.com", "subject": "Hi"})
    with pytest.raises(ConfirmationRequired):
        dispatch(call, fresh.device, bindings=BINDINGS, catalogue=CATALOGUE)
    with pytest.raises(ConfirmationRequired):
        dispatch(call, fresh.device, bindings=BINDINGS, catalogue=CATALOGUE, confirm=lambda p: False)
    assert fresh.phone.state.commands == [] and fresh.phone.state.outbox == []


def go(rig, name, **arguments):
    rig.phone.clear_log()
    return dispatch(ToolCall(name, arguments), rig.device, bindings=BINDINGS, catalogue=CATALOGUE,
                    confirm=lambda p: True)


def test_each_tool_changes_the_phone(fresh):
    s = fresh.phone.state
    go(fresh, "show_map", query="Louvre")
    assert s.map_searches == ["Louvre"] and s.top.kind == "maps"
    go(fresh, "send_email", to="bob@example.com", subject="Lunch", body="At noon?")
    assert s.outbox[-1] | {} == {"to": "bob@example.com", "subject": "Lunch", "body": "At noon?", "cc": "", "bcc": ""}
    go(fresh, "create_contact", first_name="Ada", last_name="Lovelace", phone_number="+44 20 7946 0000")
    assert s.contacts == [{"name": "Ada Lovelace", "phone": "+44 20 7946 0000", "email": ""}]
    go(fresh, "create_calendar_event", title="Dentist", datetime="2025-03-14T15:00:00")
    assert s.events[0]["title"] == "Dentist" and s.events[0]["begin_ms"] == epoch_ms("2025-03-14T15:00:00", "UTC")
    assert s.commands[0] == ["getprop", "persist.sys.timezone"]
    go(fresh, "open_wifi_settings")
    assert s.top.kind == "wifi"
    go(fresh, "turn_on_flashlight")
    assert s.torch is True and s.overlay is None
    r = go(fresh, "turn_on_flashlight")
    assert s.torch is True and "not tapped" in r.outcomes[1].note
    go(fresh, "turn_off_flashlight")
    assert s.torch is False


def test_cli_dispatch_and_dry_run(fresh):
    env = dict(fresh.adb.env)
    base = [sys.executable, "-m", "mobile_actions.cli.main", "dispatch", "--serial", fresh.serial]
    out = subprocess.run(base + ['{"name": "show_map", "arguments": {"query": "Louvre"}}'], capture_output=True,
                         text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert fresh.phone.state.map_searches == ["Louvre"]
    call = json.dumps({"name": "send_email", "arguments": {"to": "x@y.z", "subject": "a; b"}})
    out = subprocess.run(base + ["--dry-run", call], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and "--es android.intent.extra.SUBJECT 'a; b'" in out.stdout
    out = subprocess.run(base + [call], capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 1 and "confirmation" in out.stderr and fresh.phone.state.outbox == []
    out = subprocess.run(base + ["--yes", call], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and fresh.phone.state.outbox[-1]["subject"] == "a; b"


# ------------------------------------------------------------------------------------ device errors
def test_no_device_and_not_found(rig):
    from mobile_actions.android.adbserver import PrivateAdbServer
    with PrivateAdbServer() as empty:
        with pytest.raises(NoDeviceError):
            select_device(server=ServerAddress(port=empty.port), env={})
    with pytest.raises(DeviceNotFoundError, match="adb connect"):
        select_device("127.0.0.1:1", server=rig.address, env={})
    assert select_device(server=rig.address, env={"ANDROID_SERIAL": rig.serial}).serial == rig.serial


def raises_soon(exc, fn, timeout=8.0):
    """The adb server notices state changes asynchronously: poll until ``fn`` raises ``exc``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fn()
        except exc as e:
            return e
        if time.monotonic() > deadline:
            pytest.fail(f"{exc} not raised within {timeout}s")
        time.sleep(0.05)


def test_several_devices_offline_and_unauthorized(rig, tmp_path):
    client = rig.client()
    other = PhoneServer(VirtualPhone(serial="second"), "127.0.0.1", 0).start()
    try:
        rig.adb.connect(other.address.serial)
        with pytest.raises(MultipleDevicesError) as err:
            select_device(server=rig.address, env={})
        assert set(err.value.serials) == {rig.serial, other.address.serial}
    finally:
        other.close()
    try:
        raises_soon(DeviceOfflineError, lambda: select_device(other.address.serial, server=rig.address, env={}))
    finally:
        client.disconnect(other.address.serial)
    # a phone that requires AUTH with a key the server does not hold: "unauthorized"
    from tests.test_phone_protocol import write_foreign_key
    locked = PhoneServer(VirtualPhone(), "127.0.0.1", 0, adb_keys=write_foreign_key(tmp_path)).start()
    try:
        client.connect(locked.address.serial, timeout=5)
        raises_soon(DeviceUnauthorizedError, lambda: select_device(locked.address.serial, server=rig.address, env={}))
    finally:
        client.disconnect(locked.address.serial)
        locked.close()


def test_disconnect_mid_call(rig):
    rig.phone.fail_next = "disconnect"
    try:
        with pytest.raises(DeviceDisconnectedError, match="disconnected"):
            rig.device.shell(["echo", "x"])
    finally:
        rig.phone.fail_next = None
        rig.adb.connect(rig.serial)
    assert rig.device.shell(["echo", "back"]).stdout == "back\n"


@pytest.mark.parametrize("to", [" ", "\t", "\n"])
def test_a_refused_send_is_not_done_and_says_why(fresh, to):
    """The phone shows "Add at least one recipient." and sends nothing: dispatch must not call that done."""
    from mobile_actions.errors import StepFailedError

    with pytest.raises(StepFailedError, match="not done.*Add at least one recipient"):
        go(fresh, "send_email", to=to, subject="Lunch")
    assert fresh.phone.state.outbox == []


def test_a_refused_send_exits_non_zero_from_the_cli(fresh):
    call = '{"name": "send_email", "arguments": {"to": " ", "subject": "Lunch"}}'
    out = subprocess.run([sys.executable, "-m", "mobile_actions.cli.main", "dispatch", "--serial", fresh.serial,
                          "--yes", call], capture_output=True, text=True, env=dict(fresh.adb.env), timeout=60)
    assert out.returncode == 1 and "Add at least one recipient" in out.stderr and "done" not in out.stdout
    assert fresh.phone.state.outbox == []


def test_a_dry_run_says_which_calls_need_confirmation():
    """What a dry run prints is what a real run does: every call that changes or sends something asks."""
    cat, bindings = load_catalogue("mobile_actions"), load_bindings("mobile_actions")
    needs = {name: dispatch(ToolCall(name, args), None, bindings=bindings, catalogue=cat, dry_run=True).plan.confirm
             for name, args in (("turn_on_flashlight", {}), ("show_map", {"query": "Louvre"}),
                                ("create_contact", {"first_name": "Ana", "last_name": "Lima"}))}
    assert needs == {"turn_on_flashlight": True, "show_map": False, "create_contact": True}
