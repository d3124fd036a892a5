"""Show a run folder: as text lines (`replay_lines`) or as one HTML page with its screenshots (`write_html`).

Why the page is self-contained (inline CSS, a few lines of inline script, screenshots linked by relative
path `screens/NNN.png`): it is written *into* the run folder, so the folder can be copied, zipped or
served as it is and still shows everything; nothing is fetched from a network. The script only marks
screenshots that failed to load (a trace copied without its PNGs) and counts the loaded ones in
``body[data-images]`` (what the headless-browser test reads).
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Iterator

from mobile_actions.hybrid.trace import SCREEN_RE, Trace

HTML_NAME = "replay.html"


def _calls_text(calls: list[dict]) -> str:
    out = []
    for c in calls:
        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in (c.get("arguments") or {}).items())
        out.append(f"{c.get('name')}({args})")
    return ", ".join(out) or "(no calls)"


def _ms(rec: dict) -> str:
    return f"{rec['ms']:.0f} ms" if isinstance(rec.get("ms"), (int, float)) else ""


def _short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def describe(rec: dict[str, Any]) -> tuple[str, str, str]:
    """(kind label, status, one-line summary) of a trace record."""
    t = rec.get("type")
    st = rec.get("status") or ""
    if t == "run":
        dev = rec.get("device") or {}
        return "run", "", f"request: {rec.get('request')!r} on {dev.get('serial') or 'no device'}" + (
            " (virtual phone)" if dev.get("virtual") else "")
    if t == "resume":
        return "resume", "", f"resumed on {(rec.get('device') or {}).get('serial')}"
    if t == "caller":
        bad = [v for v in rec.get("validation", []) if v.get("problems")]
        val = f"{len(bad)} invalid" if bad else "all valid"
        probs = "; ".join(rec.get("output_problems") or [])
        text = f" text: {_short(rec['text'], 80)!r}" if rec.get("text") else ""
        rules = "; ".join(rec.get("rules") or [])
        return f"caller turn {rec.get('turn')}", st, (f"calls: {_calls_text(rec.get('calls', []))} [{val}]{text}"
                                                     + (f" output problem: {probs}" if probs else "")
                                                     + (f" rules: {rules}" if rules else ""))
    if t == "dispatch":
        cmds = [c.get("step", "") for c in rec.get("commands", [])]
        extra = f" — {rec['reason']}" if rec.get("reason") else ""
        res = {k: v for k, v in (rec.get("result") or {}).items() if k not in ("status", "reason")}
        return (f"call {rec.get('key', '').split(':')[-1]}", st,
                f"{rec.get('what') or _calls_text([rec.get('call', {})])}{extra}"
                + (f" | result {json.dumps(res, ensure_ascii=False)}" if res else "")
                + (f" | $ {' ; '.join(cmds)}" if cmds else ""))
    if t == "nav":
        act = (rec.get("action") or {}).get("command") or f"unparseable {rec.get('raw')!r}"
        argv = " ".join(rec.get("argv") or []) if rec.get("argv") else ""
        note = rec.get("note") or rec.get("error") or ""
        return (f"nav {rec.get('task')} #{rec.get('step')}", st,
                f"{act}" + (f" → {argv}" if argv else "") + (f" ({note})" if note else ""))
    if t == "gate" and rec.get("rule"):
        said = " | ".join(rec.get("goals") or []) or f"{rec.get('cue')!r} in {rec.get('piece')!r}"
        return "gate", st, f"rule {rec['rule']}: {said}"
    if t == "gate":
        return "gate", st, f"not handed to the navigator: {rec.get('reason', '')}"
    if t == "intent":
        return "intent", "", f"about to act: {rec.get('what') or ' '.join(rec.get('argv') or [])}"
    if t == "nav_start":
        phone = rec.get("phone") or {}
        seen = [w for w, v in (("state", phone.get("state")), ("screen", phone.get("screen"))) if v is not None]
        return f"nav {rec.get('task')} start", st, f"the phone as the task began ({' and '.join(seen) or 'unreadable'})"
    if t == "check":
        return f"nav {rec.get('task')} check", st, str(rec.get("reason", ""))
    if t == "nav_end":
        return f"nav {rec.get('task')} end", rec.get("item_status", st), f"{rec.get('outcome')}: {rec.get('reason')}"
    if t == "interrupted":
        return "interrupted", "", rec.get("error", "")
    if t == "report":
        r = rec.get("report") or {}
        return "report", r.get("status", ""), (f"{len([i for i in r.get('items', []) if i['status'] == 'done'])} done, "
                                               f"{r.get('steps')} steps, {r.get('seconds')} s")
    return str(t), st, _short(json.dumps(rec, ensure_ascii=False))


def guard_lines(rec: dict[str, Any]) -> list[str]:
    """What the text navigator's guards narrowed on a navigator step (``guard form-field-order narrowed tap
    targets 14 → 2``), one line each."""
    from mobile_actions.navigator.guards import Firing

    fired = rec.get("guards_fired") if rec.get("type") == "nav" else None
    out = []
    for item in fired if isinstance(fired, list) else []:
        try:
            out.append(Firing.from_json(item).describe())
        except ValueError as e:
            out.append(f"unreadable guard record ({e}): {_short(json.dumps(item, ensure_ascii=False), 80)}")
    return out


def replay_lines(run_dir: str | Path) -> Iterator[str]:
    """The run as text: one line per step (a navigator step's guards on lines of their own below it), then the
    final report (what was and was not done)."""
    trace = Trace.read(run_dir)
    yield f"run {trace.dir}"
    for rec in trace.records:
        kind, status, summary = describe(rec)
        ms = _ms(rec)
        screen = f" [{rec['screen']}]" if rec.get("screen") else ""
        yield f"{rec.get('seq', ''):>4} {kind:<18} {status:<10} {summary}{screen}" + (f"  ({ms})" if ms else "")
        for line in guard_lines(rec):
            yield f"{'':>4} {'':<18} {'':<10} {line}"
    yield from report_lines(trace)


def report_lines(trace: Trace) -> Iterator[str]:
    rep = (trace.report or {}).get("report")
    if not rep:
        yield "no final report: the run did not finish (mobile-actions run --resume RUN)"
        return
    yield f"status: {rep['status']}" + (f" ({rep['error']})" if rep.get("error") else "")
    for title, statuses in (("done", ("done",)), ("not done", ("not_done", "skipped", "planned", "unknown")),
                            ("refused", ("refused",))):
        items = [i for i in rep["items"] if i["status"] in statuses]
        yield f"{title}: {len(items)}"
        for i in items:
            yield f"  - {i['what']}" + (f" — {i['reason']}" if i.get("reason") else "")


# ============================================================================================ HTML
CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px} .req{font-size:16px;background:#f4f4f4;padding:8px 12px;border-radius:6px}
.step{border-left:4px solid #ccc;padding:6px 12px;margin:10px 0;display:flex;gap:16px}
.step.done{border-color:#2e7d32}.step.refused,.step.failed,.step.interrupted{border-color:#c62828}
.step.not_done,.step.skipped{border-color:#ef6c00}
.kind{font-weight:600;min-width:150px}.st{font-size:12px;color:#555}
pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;padding:6px;margin:4px 0;font-size:12px}
img.shot{width:180px;border:1px solid #ccc;border-radius:6px}
img.broken{outline:3px solid #c62828}
.guard{font-size:12px;color:#555}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}
"""

SCRIPT = """
window.addEventListener('load',function(){var ims=document.querySelectorAll('img.shot'),ok=0;
ims.forEach(function(i){if(i.complete&&i.naturalWidth>0){ok++}
else{i.classList.add('broken');i.alt='missing '+i.getAttribute('src')}});
document.body.setAttribute('data-images',ok+'/'+ims.length);});
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _details(rec: dict[str, Any]) -> str:
    """Collapsible raw material for a step: prompt, raw output, device commands."""
    parts = []
    if rec.get("type") == "caller":
        parts.append(("prompt", rec.get("prompt", "")))
        parts.append(("raw model output", rec.get("raw", "")))
        parts.append(("validation", json.dumps(rec.get("validation", []), ensure_ascii=False, indent=1)))
        if rec.get("timings"):
            parts.append(("timings", json.dumps(rec["timings"])))
    elif rec.get("type") == "dispatch":
        parts.append(("device commands", json.dumps(rec.get("commands", []), ensure_ascii=False, indent=1)))
    elif rec.get("type") == "nav":
        parts.append(("navigator", json.dumps({k: rec.get(k) for k in ("raw", "action", "argv", "exit_code",
                                                                         "guard", "model_ms", "error")
                                               if rec.get(k) is not None}, ensure_ascii=False, indent=1)))
    return "".join(f"<details><summary>{_e(name)}</summary><pre>{_e(text)}</pre></details>" for name, text in parts)


def render_html(run_dir: str | Path) -> str:
    trace = Trace.read(run_dir)
    rows = []
    for rec in trace.records:
        kind, status, summary = describe(rec)
        img = ""
        if SCREEN_RE.fullmatch(str(rec.get("screen") or "")):   # only this folder's own screenshots, never a URL
            src = _e(rec["screen"])
            img = f'<a href="{src}"><img class="shot" src="{src}" alt="{src}" loading="eager"></a>'
        ms = _ms(rec)
        guards = "".join(f'<div class="guard">{_e(line)}</div>' for line in guard_lines(rec))
        rows.append(f'<div class="step {_e(status)}" id="seq{_e(rec.get("seq", ""))}">{img}<div>'
                    f'<div><span class="kind">{_e(kind)}</span> <span class="st">{_e(status)} {_e(ms)}</span></div>'
                    f'<div>{_e(summary)}</div>{guards}{_details(rec)}</div></div>')
    report = "<br>".join(_e(line) for line in report_lines(trace))
    state = trace.dir / "phone_state.json"
    state_html = ""
    if state.is_file():
        try:
            data = json.loads(state.read_text(encoding="utf-8"))
            keep = {k: data.get(k) for k in ("screen", "current", "torch", "wifi", "bluetooth", "airplane", "contacts",
                                             "events", "outbox", "notes", "map_searches", "visited_urls")}
            shown = _e(json.dumps(keep, ensure_ascii=False, indent=1))
            state_html = f"<h2>Phone state at the end</h2><pre>{shown}</pre>"
        except (OSError, ValueError):
            pass
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>replay: {_e(trace.request)}</title>"
            f"<style>{CSS}</style></head><body data-images='0/0'>"
            f"<h1>mobile-actions run</h1><div class='req'>{_e(trace.request)}</div>"
            f"<h2>Report</h2><p id='report'>{report}</p><h2>Steps</h2>{''.join(rows)}{state_html}"
            f"<script>{SCRIPT}</script></body></html>\n")


def write_html(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the page (default ``RUN/replay.html``, so the relative screenshot links resolve)."""
    path = Path(out) if out else Path(run_dir) / HTML_NAME
    page = render_html(run_dir)
    if path.parent.resolve() != Path(run_dir).resolve():
        # elsewhere: point the links back at the run folder
        import os
        rel = os.path.relpath(Path(run_dir).resolve(), path.parent.resolve())
        page = page.replace('src="screens/', f'src="{rel}/screens/').replace('href="screens/', f'href="{rel}/screens/')
    path.write_text(page, encoding="utf-8")
    return path
