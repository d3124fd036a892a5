"""Replaying a run folder: text lines, and the HTML page checked in headless Chromium."""
import shutil
import subprocess
from pathlib import Path

import pytest

from mobile_actions.hybrid.runner import RunConfig, Runner
from mobile_actions.hybrid.replay import render_html, replay_lines, write_html
from tests.test_hybrid_fakes import ScriptedCaller, ScriptedNavigator, phone, raw_calls, session  # noqa: F401

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def run_dir(session, phone, tmp_path):
    caller = ScriptedCaller(raw_calls(("show_map", {"query": "Louvre <b>&"}),
                                      ("send_email", {"to": "ana@example.com"})))       # the second is invalid
    nav = ScriptedNavigator(phone, ("tap", "Copy"), "COMPLETE")
    r = Runner(RunConfig(runs_dir=str(tmp_path), yes=True, navigate="always", now="2025-06-02T10:00:00"),
               caller=caller, navigator=nav, session=session)
    return r.run("show the Louvre, copy its name and email ana@example.com").run_dir


def test_text_replay(run_dir):
    lines = list(replay_lines(run_dir))
    text = "\n".join(lines)
    assert "caller turn 0" in text and "1 invalid" in text
    assert 'show_map(query="Louvre <b>&")' in text and "am start" in text
    assert "CLICK:" in text and "→ input tap" in text and "[screens/" in text
    # the GUI part does not email Ana (the email call was invalid): not done, as the phone shows
    assert "done: 1" in text and "not done: 1" in text and "refused: 1" in text and "subject" in text
    assert lines[-1].startswith("  - send_email")


def test_html_page_is_self_contained(run_dir):
    page = render_html(run_dir)
    assert 'src="screens/001.png"' in page and "http://" not in page and "https://" not in page
    assert "Louvre &lt;b&gt;&amp;" in page and "<b>&" not in page             # escaped
    assert "&lt;start_function_call&gt;" in page                               # raw output shown
    out = write_html(run_dir)
    assert out == run_dir / "replay.html" and out.read_text() == page
    elsewhere = write_html(run_dir, run_dir.parent / "page.html")
    assert f'src="{run_dir.name}/screens/001.png"' in elsewhere.read_text()


def test_replay_cli(run_dir, capsys):
    from mobile_actions.cli.main import main

    assert main(["replay", str(run_dir)]) == 0
    assert "nav request" in capsys.readouterr().out
    assert main(["replay", str(run_dir), "--html"]) == 0
    assert (run_dir / "replay.html").is_file()
    assert main(["replay", str(run_dir.parent / "nope")]) == 2


@pytest.mark.skipif(not CHROMIUM.exists(), reason="headless check needs /usr/bin/chromium (apt-get install chromium)")
def test_html_in_headless_chromium(run_dir):
    page = write_html(run_dir)
    n_screens = len(list((run_dir / "screens").glob("*.png")))
    (run_dir / "screens" / "001.png").rename(run_dir / "screens" / "gone.png")     # one missing screenshot
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
           f"--user-data-dir={run_dir.parent / 'chromium-profile'}", "--dump-dom", page.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=90).stdout
    assert f'data-images="{n_screens - 1}/{n_screens}"' in dom     # every other screenshot loaded from disk
    assert 'class="shot broken"' in dom and "missing screens/001.png" in dom
    assert "show the Louvre, copy its name and email ana@example.com" in dom
    shutil.rmtree(run_dir.parent / "chromium-profile", ignore_errors=True)
