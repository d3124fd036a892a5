"""The torch-free runtime on the tiny export: no torch, prefix reuse, streaming, grammar in the loop."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime

import numpy as np
import pytest

from mobile_actions.catalog import load_catalogue
from tests.test_export_support import tiny_export

NOW = datetime(2025, 3, 14, 9, 26, 53)


def test_runtime_and_call_cli_import_no_torch():
    folder = tiny_export("fp32")
    code = (
        "import sys, json\n"
        "from mobile_actions.runtime import Caller\n"
        f"c = Caller.from_pretrained({str(folder)!r}, threads=1)\n"
        "r = c.call('turn on the flashlight')\n"
        "from mobile_actions.cli.main import main\n"
        f"main(['call', 'turn on the flashlight', '--model', {str(folder)!r}, '--json'])\n"
        "bad = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.') or m == 'transformers')\n"
        "print('IMPORTED', json.dumps(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("IMPORTED")]
    assert line, out.stderr[-2000:]
    assert json.loads(line[0].split(" ", 1)[1]) == []
    assert '"calls"' in out.stdout


@pytest.fixture(scope="module")
def caller_factory():
    from mobile_actions.runtime import Caller

    folder = tiny_export("fp32", layout="cache")

    def make(**kw):
        kw.setdefault("threads", 1)
        return Caller.from_pretrained(folder, **kw)
    return make


@pytest.mark.parametrize("layout", ["cache", "calendar"])
def test_prefix_reuse_gives_the_same_tokens_as_full_prefill(caller_factory, layout):
    full = caller_factory(layout=layout, prefix_reuse=False, constrained=False, max_new_tokens=12)
    reuse = caller_factory(layout=layout, prefix_reuse=True, constrained=False, max_new_tokens=12)
    assert ("Days ahead: 1 " in full.prompt("turn on the flashlight", now=NOW)) == (layout == "calendar")
    for req in ("turn on the flashlight", "email bob@example.com that I am late"):
        a, b = full.call(req, now=NOW), reuse.call(req, now=NOW)
        assert a.raw == b.raw
        assert a.timings["reused_tokens"] == 0 and b.timings["reused_tokens"] > 100
        assert b.timings["prefill_tokens"] < a.timings["prefill_tokens"] - 400   # the declarations are not run again


def test_a_request_continues_in_its_stable_prefixs_cache_without_growing_it(caller_factory, tmp_path):
    """The stable prefix's cache has room for the request after it: no copy of the whole prefix into a
    buffer twice its size (seconds and hundreds of MB for a 100-tool catalogue), filled or read from disk."""
    for _ in range(2):   # filled, then read from the prefix store
        c = caller_factory(layout="cache", constrained=False, max_new_tokens=12, prefix_dir=tmp_path)
        c.warm()
        buffers = c._prefixes[0].cache.buffers
        r = c.call("email bob@example.com that I am late", now=NOW)
        assert c._prefixes[0].cache.buffers is buffers
        # the whole prefix, the datetime line's fixed words included, is a token prefix of the prompt
        assert r.timings["reused_tokens"] == len(c._prefixes[0].ids)
        assert c.tokenizer.decode(list(c._prefixes[0].ids[-3:])).endswith("format:")


def test_the_previous_prompt_is_reused_only_when_asked(caller_factory):
    c = caller_factory(layout="official", constrained=False, max_new_tokens=4, deterministic=False)
    c.call("turn on the flashlight", now=NOW)
    r = c.call("turn on the flashlight", now=NOW)
    assert r.timings["prefill_tokens"] == 1  # identical prompt: only the last token is run again
    d = caller_factory(layout="official", constrained=False, max_new_tokens=4)
    d.call("turn on the flashlight", now=NOW)
    assert d.call("turn on the flashlight", now=NOW).timings["reused_tokens"] == 0


def test_a_request_decodes_the_same_whatever_was_decoded_before(caller_factory):
    """Only a catalogue's stable prefix is reused: the same request gives the same tokens first, again, and
    after other requests that share most of its prompt."""
    req = "email bob@example.com that I am late"
    first = caller_factory(constrained=False, max_new_tokens=12).call(req, now=NOW).raw
    c = caller_factory(constrained=False, max_new_tokens=12)
    results = [c.call(req, now=NOW)]
    for other in ("email bob@example.com that I am early", "turn on the flashlight"):
        c.call(other, now=NOW)
        results.append(c.call(req, now=NOW))
    assert [r.raw for r in results] == [first] * len(results)
    # each time from the same boundary: the catalogue's prefix, not the previous request's longer match
    assert len({r.timings["reused_tokens"] for r in results}) == 1


def test_a_conversation_with_its_own_developer_turn_reuses_its_own_prefix(caller_factory):
    """A navigator's prompts start with its instruction, not the caller's date lines: their declarations'
    prefix is still kept, and decoding from it gives what a full prefill gives."""
    from mobile_actions.navigator.screen import Element, Screen
    from mobile_actions.navigator.text import messages, screen_catalogue

    screen = Screen("com.android.settings", (Element("Wi-Fi", "switch", (0, 100, 500, 200), clickable=True),),
                    (1080, 2400))
    msgs = messages("turn on wifi", screen, ())
    tools = screen_catalogue()
    full = caller_factory(constrained=False, prefix_reuse=False, max_new_tokens=8).call_messages(msgs, tools)
    c = caller_factory(constrained=False, max_new_tokens=8)
    first, again = c.call_messages(msgs, tools), c.call_messages(msgs, tools)
    assert first.raw == again.raw == full.raw
    assert first.timings["reused_tokens"] > 100 and first.timings["prefix_from"] in ("filled", "disk")
    assert again.timings["prefix_from"] == "memory"


def test_stream_yields_the_same_text_as_call(caller_factory):
    c = caller_factory(constrained=False, max_new_tokens=10)
    assert "".join(c.stream("open wifi settings", now=NOW)) == c.call("open wifi settings", now=NOW).raw


def test_constrained_results_are_valid_or_text(caller_factory):
    c = caller_factory(max_new_tokens=40)
    for req in ("turn on the flashlight", "add Ann Lee to contacts"):
        r = c.call(req, now=NOW)
        assert all(not p for p in [r.problems]) or "not a well-formed call" in str(r.problems[0])
        assert r.timings["ttft_ms"] > 0 and r.timings["total_ms"] >= r.timings["ttft_ms"]


def test_a_grammar_dead_end_ends_the_turn_without_a_traceback(caller_factory, monkeypatch):
    """Should a constraint ever leave no token, the caller stops there and the partial call is a problem."""
    import mobile_actions.decoding.tokens as grammar
    from mobile_actions.errors import GrammarDeadEnd

    real, n = grammar.pick, [0]

    def pick(logits, allowed):
        n[0] += 1
        if n[0] > 3:
            raise GrammarDeadEnd("no token is allowed: the grammar reached a dead end")
        return real(logits, allowed)

    monkeypatch.setattr(grammar, "pick", pick)
    c = caller_factory(max_new_tokens=40, sparse_head=False)
    r = c.call("add Ann Lee to contacts", now=NOW)
    assert not r.calls and r.timings["new_tokens"] <= 3 + r.timings["forced_tokens"]


def test_threads_setting_reaches_onnxruntime(caller_factory):
    c = caller_factory(threads=1)
    assert c.decoder.threads == 1


class _ScriptedDecoder:
    """Stands in for the ONNX decoder: logits that prefer a given token sequence, else noise."""

    def __init__(self, real, script):
        self.real, self.script, self.steps, self.fed = real, list(script), 0, []
        self.manifest = real.manifest
        self.sparse_head, self.max_sparse_rows, self.sparse_calls = True, 512, 0

    def new_cache(self, capacity):
        from mobile_actions.runtime.onnx import KVCache

        return KVCache.empty(2, 1, 1, capacity)

    def forward(self, ids, past=None, rows=None):
        self.fed.append(list(ids))
        self.steps += 1
        past = past if past is not None else self.new_cache(len(ids))
        past.reserve(past.length + len(ids))
        past.length += len(ids)
        logits = np.random.default_rng(self.steps).normal(size=len(self._strings)).astype(np.float32)
        if self.script:
            logits[self.script.pop(0)] += 1000
        if rows is not None:   # the sparse head: those rows only, in their order
            self.sparse_calls += 1
            return logits[np.asarray(rows)], past
        return logits, past


def test_forced_tokens_skip_model_steps(caller_factory):
    c = caller_factory(max_new_tokens=60, prefix_reuse=False)  # every forward() is then a request step
    cat = load_catalogue("mobile_actions")
    tok = c.tokenizer
    from mobile_actions.decoding.tokens import TokenTable

    table = TokenTable.from_folder(c.folder)
    # Script (the test tokenizer is character-level): <start_function_call>, "call" is forced and
    # ':' held back for the model; 't' is a choice, "urn_" forced with 'o' held back; 'o'; then
    # 'n' (not 'f'); the rest, up to <end_function_call>, is forced.
    script = [48] + [tok.encode(ch, add_special_tokens=False).ids[-1] for ch in ":ton"] + [106]
    fake = _ScriptedDecoder(c.decoder, script)
    fake._strings = table.strings
    c.decoder = fake
    r = c.call("turn on the flashlight", tools=cat, now=NOW)
    assert r.calls and r.calls[0].name == "turn_on_flashlight" and not r.problems, r
    assert r.timings["forced_tokens"] > 0
    assert r.timings["model_steps"] < r.timings["new_tokens"] + 1
    # forced tokens were fed to the model together with the next chosen token, not one by one
    assert any(len(f) > 1 for f in fake.fed[1:])
    # structural states allow few ids: those steps asked for their rows only
    assert fake.sparse_calls > 0 and r.timings["sparse_steps"] == fake.sparse_calls


def test_an_older_export_is_refused_with_how_to_reexport(tmp_path, capsys):
    """Folders of an older export format (2: the graph concatenated the KV cache; 1: `past_key_i` names) are
    refused with how to re-export."""
    import shutil

    from mobile_actions.cli.main import main
    from mobile_actions.runtime import Caller, Decoder, ExportFormatError

    src = tiny_export("fp32")
    for f in ("manifest.json", "tokenizer.json"):
        shutil.copy(src / f, tmp_path / f)
    m = json.loads((tmp_path / "manifest.json").read_text())
    m["format_version"] = 2
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    for make in (Caller.from_pretrained, Decoder.from_folder):
        with pytest.raises(ExportFormatError, match=r"model prepare --force.*export"):
            make(tmp_path)
    assert main(["call", "turn on the flashlight", "--model", str(tmp_path)]) == 2
    assert "re-export" in capsys.readouterr().err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps and madvise are Linux's")
def test_mapped_weight_pages_are_dropped_only_where_never_written(tmp_path):
    """After prepacking, onnxruntime's mappings of the weights file hold pages nobody reads again: clean ones
    are dropped (the kernel reloads the file's bytes on access), a written one keeps its writes."""
    from mobile_actions.runtime.onnx import MappedWeights

    path = tmp_path / "model.onnx.data"
    page = 4096
    np.arange(256 * page, dtype=np.uint8).tofile(path)
    clean = np.memmap(path, dtype=np.uint8, mode="c", shape=(128 * page,))          # private, like ORT's
    dirty = np.memmap(path, dtype=np.uint8, mode="c", offset=128 * page, shape=(128 * page,))
    total = int(clean.sum()) + int(dirty.sum())                                   # every page resident
    dirty[5] = 7
    released = MappedWeights(path).release()
    assert released == 128 * page
    assert int(dirty[5]) == 7 and int(clean[page + 3]) == (page + 3) % 256         # reread from the file
    assert total == int(clean.sum()) + int(dirty.sum()) - 7 + (128 * page + 5) % 256
    assert MappedWeights(tmp_path / "not-mapped").release() == 0
    weights = MappedWeights(path)                  # and with the file's page cache dropped too
    assert weights.ranges and sum(n for _, n, _, _ in weights.ranges) == 128 * page
    weights.evict()
    assert int(clean[page + 3]) == (page + 3) % 256 and int(dirty[5]) == 7


def test_workers_spin_within_a_run_unless_the_other_cores_are_busy(monkeypatch, caller_factory):
    import os

    from mobile_actions.runtime import onnx

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(onnx, "busy_cores", lambda since=None: 0.1)     # a quiet machine
    assert onnx.spin_by_default(2)
    monkeypatch.setattr(onnx, "busy_cores", lambda since=None: 1.0)     # another job on one of the two cores
    assert not onnx.spin_by_default(2)
    assert onnx.spin_by_default(1)                           # the free core is enough for one thread
    monkeypatch.setattr(onnx, "busy_cores", lambda since=None: None)    # no /proc/stat
    assert onnx.spin_by_default(2)
    assert caller_factory(spin=True).decoder.spin and not caller_factory(spin=False).decoder.spin


def test_other_processes_load_is_read_over_a_window_already_spent():
    """A Caller reads the machine's load over its own tokenizer load (`since`), not a wait of its own."""
    from mobile_actions.runtime import onnx

    start = onnx.CpuTimes.now()
    sum(i * i for i in range(200_000))   # this process's own work is not counted as another's
    busy = onnx.busy_cores(since=start)
    assert busy is not None and 0.0 <= busy <= (os.cpu_count() or 1)


def test_busy_cores_counts_other_processes_not_this_one():
    import time

    from mobile_actions.runtime.onnx import busy_cores

    if busy_cores(0.01) is None:
        pytest.skip("no /proc/stat")
    spinner = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time() + 5\nwhile time.time() < t: pass"])
    try:
        time.sleep(0.3)
        assert busy_cores(0.2) >= 0.7                      # the spinning child: one core
    finally:
        spinner.kill()
        spinner.wait()


def test_kv_cache_grows_and_copies_its_prefix_keeping_the_filled_positions():
    from mobile_actions.runtime.onnx import KVCache

    c = KVCache.empty(2, 1, 3, capacity=2)
    c.buffers[0][:] = 1.0
    c.length, c.binding = 2, ("session", "binding")
    c.reserve(3)                                  # grows by at least doubling; a stale binding is dropped
    assert c.capacity == 4 and c.length == 2 and c.binding is None
    assert (c.buffers[0][:, :, :2] == 1.0).all() and (c.buffers[0][:, :, 2:] == 0.0).all()
    p = c.prefix(1, room=5)
    assert (p.length, p.capacity) == (1, 6) and (p.buffers[0][:, :, :1] == 1.0).all()
    with pytest.raises(ValueError):
        c.prefix(3)
