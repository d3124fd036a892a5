"""Every adbutils call in the spec's table, through the real adb server, against the virtual phone."""

import io
import json
import subprocess
import xml.etree.ElementTree as ET

from PIL import Image

from mobile_actions.android.adbserver import adb_binary
from tests.adb_fixtures import fresh, rig  # noqa: F401


def test_listed_with_model_and_transport_id(rig):
    infos = {d.serial: d for d in rig.client().list(extended=True)}
    assert infos[rig.serial].state == "device"
    assert infos[rig.serial].tags["model"] == "Virtual_Phone"
    assert infos[rig.serial].tags["transport_id"].isdigit()


def test_shell_v1_v2_and_exit_codes(fresh):
    d = fresh.adbutils_device()
    assert d.shell("echo hello; wm size") == "hello\nPhysical size: 1080x2400"
    r = d.shell2(["sh", "-c", "nope"])
    assert r.returncode == 127 and "nope: not found" in r.output
    r = d.shell2("echo out; echo err >&2; exit 5", v2=True)
    assert (r.returncode, r.stdout, r.stderr) == (5, "out\n", "err\n")
    assert d.getprop("ro.product.model") == "Virtual Phone"


def test_window_rotation_battery_power(fresh):
    d = fresh.adbutils_device()
    assert tuple(d.window_size()) == (1080, 2400)
    assert d.battery().level == fresh.phone.state.battery
    assert d.is_screen_on()
    d.keyevent("POWER")
    assert not d.is_screen_on()
    d.keyevent("WAKEUP")
    assert d.is_screen_on()


def test_app_start_current_stop(fresh):
    d = fresh.adbutils_device()
    d.app_start("com.android.contacts")
    assert d.app_current().package == "com.android.contacts"
    d.app_start("com.google.android.gm", ".ComposeActivityGmail")
    assert d.app_current().activity == "com.google.android.gm.ComposeActivityGmail"
    d.app_stop("com.google.android.gm")
    assert d.app_current().package == "com.android.contacts"
    assert "com.android.settings" in d.list_packages()


def test_screenshot_is_a_real_phone_sized_png(fresh):
    d = fresh.adbutils_device()
    d.open_browser("example.org")
    img = d.screenshot(error_ok=False)
    assert img.size == (1080, 2400)
    assert len(img.resize((54, 120)).getcolors(maxcolors=100000)) > 5   # not a blank/black frame
    assert fresh.phone.state.visited_urls == ["https://example.org"]
    assert d.framebuffer().size == (1080, 2400)


def test_exec_out_screencap_cli(fresh):
    fresh.phone.run("am start -a android.intent.action.VIEW -d 'geo:0,0?q=Louvre'")
    out = subprocess.run([adb_binary(), "-P", str(fresh.adb.port), "-s", fresh.serial, "exec-out", "screencap", "-p"],
                         capture_output=True, env=fresh.adb.env, timeout=30)
    assert out.returncode == 0
    assert Image.open(io.BytesIO(out.stdout)).size == (1080, 2400)


def test_dump_hierarchy_matches_the_screen(fresh):
    d = fresh.adbutils_device()
    fresh.phone.run("cmd statusbar expand-settings")
    root = ET.fromstring(d.dump_hierarchy())
    tiles = {n.get("content-desc"): n for n in root.iter("node") if n.get("resource-id", "").endswith(":id/tile")}
    assert tiles["Flashlight"].get("checked") == "false" and tiles["Flashlight"].get("clickable") == "true"
    x1, y1, x2, y2 = map(int, tiles["Flashlight"].get("bounds").replace("][", ",").strip("[]").split(","))
    d.click((x1 + x2) // 2, (y1 + y2) // 2)
    assert fresh.phone.state.torch is True


def test_input_text_keys_and_swipe(fresh):
    d = fresh.adbutils_device()
    d.app_start("com.google.android.apps.maps")
    d.click(540, 160)                       # the search box
    d.send_keys("Musée d'Orsay")
    d.keyevent("ENTER")
    assert fresh.phone.state.map_searches == ["Musée d'Orsay"]
    d.keyevent("HOME")
    d.swipe(540, 10, 540, 900, 0.1)         # pull down the shade
    assert fresh.phone.state.overlay == "shade"
    d.swipe(540, 600, 540, 1500, 0.1)       # a second swipe down expands Quick Settings
    assert fresh.phone.state.overlay == "quick_settings"
    d.keyevent("BACK")
    assert fresh.phone.state.overlay is None
    d.switch_wifi(False)
    assert fresh.phone.state.wifi is False


def test_sync_push_pull_list_stat(fresh, tmp_path):
    d = fresh.adbutils_device()
    d.sync.push(b"payload \x00\xff", "/sdcard/Download/x.bin")
    assert d.sync.read_bytes("/sdcard/Download/x.bin") == b"payload \x00\xff"
    assert "x.bin" in [f.path for f in d.sync.list("/sdcard/Download")]
    assert d.sync.stat("/sdcard/Download/x.bin").size == 10
    assert not d.sync.exists("/sdcard/none")
    dst = tmp_path / "x.bin"
    d.sync.pull("/sdcard/Download/x.bin", dst)
    assert dst.read_bytes() == b"payload \x00\xff"


def test_state_dump_over_the_shell(fresh):
    d = fresh.adbutils_device()
    fresh.phone.run("svc wifi disable")
    state = json.loads(d.shell(["dumpsys", "mobile-actions"]))
    assert state["wifi"] is False and state["screen"] == "launcher"
    assert json.loads(d.shell("vphone state"))["serial"] == fresh.phone.state.serial


def test_refused_service_and_root(fresh):
    d = fresh.adbutils_device()
    assert "cannot run as root" in d.root()


def test_phone_command_quick_start(rig):
    """The README's path: start `phone`, adb connect, dispatch show_map, screencap the map."""
    import sys
    proc = subprocess.Popen([sys.executable, "-m", "mobile_actions.cli.main", "phone", "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        serial = proc.stdout.readline().split()[-1]
        rig.adb.connect(serial)
        call = '{"name": "show_map", "arguments": {"query": "Louvre"}}'
        out = subprocess.run([sys.executable, "-m", "mobile_actions.cli.main", "dispatch", "--serial", serial, call],
                             capture_output=True, text=True, env=rig.adb.env, timeout=60)
        assert out.returncode == 0, out.stderr
        d = rig.client().device(serial=serial)
        state = json.loads(d.shell(["dumpsys", "mobile-actions"]))
        assert state["map_searches"] == ["Louvre"] and state["screen"] == "maps"
        png = subprocess.run([adb_binary(), "-P", str(rig.adb.port), "-s", serial, "exec-out", "screencap", "-p"],
                             capture_output=True, env=rig.adb.env, timeout=30).stdout
        assert Image.open(io.BytesIO(png)).size == (1080, 2400)
    finally:
        rig.client().disconnect(serial)
        proc.terminate()
        proc.wait(10)
