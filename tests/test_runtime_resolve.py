"""The default path is the on-device path: `--model default` -> the export `model prepare` builds (ONNX),
PyTorch only with --torch; `model prepare` builds that export once (skips a current one, --force rebuilds)."""
from __future__ import annotations

import json
import shutil

import pytest

from mobile_actions.caller.model import BUNDLED_ADAPTER
from mobile_actions.errors import NotPreparedError
from mobile_actions.runtime.prepared import DEFAULT_QUANT
from tests.test_export_support import tiny_export


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.delenv("MOBILE_ACTIONS_ONNX", raising=False)
    monkeypatch.setenv("MOBILE_ACTIONS_CACHE", str(tmp_path))
    return tmp_path


def _prepared(folder, **manifest):
    """A copy of the tiny export made to look like the bundled caller's prepared export."""
    from mobile_actions.runtime.prepared import bundled_adapter_sha256

    shutil.copytree(tiny_export("fp32"), folder)
    m = json.loads((folder / "manifest.json").read_text())
    m.update({"source_model": "default", "quant": DEFAULT_QUANT, "adapter_sha256": bundled_adapter_sha256(),
              "lean_full_head": {"bits": 4, "rescored_rows": 64}, "split_table": {"hot_rows": 35084}}, **manifest)
    (folder / "manifest.json").write_text(json.dumps(m))
    shutil.copyfile(BUNDLED_ADAPTER / "grounding.json", folder / "grounding.json")
    return folder


def test_default_onnx_dir(cache, monkeypatch):
    from mobile_actions.cli.runtime import default_onnx_dir

    assert default_onnx_dir() == str(cache / "onnx-q8")
    assert default_onnx_dir("int8") == str(cache / "onnx-int8")       # export --quant int8 writes here
    monkeypatch.setenv("MOBILE_ACTIONS_ONNX", "/x")
    assert default_onnx_dir() == "/x"


def test_stale_reasons(cache):
    from mobile_actions.runtime.prepared import stale_reason

    folder = cache / f"onnx-{DEFAULT_QUANT}"
    assert "no export" in stale_reason(folder)
    _prepared(folder)
    assert stale_reason(folder) is None
    for change, why in (({"adapter_sha256": "0" * 64}, "another version of the bundled adapter"),
                        ({"format_version": 1}, "older export format"), ({"quant": "int4"}, "quantised 'int4'"),
                        ({"source_model": "runs/x"}, "not of the bundled caller"),
                        ({"lean_full_head": None}, "8-bit full head"), ({"split_table": None}, "not the split table"),
                        ({"window_start": None}, "not only their window's")):
        m = json.loads((folder / "manifest.json").read_text())
        (folder / "manifest.json").write_text(json.dumps({**m, **change}))
        assert why in stale_reason(folder)
        (folder / "manifest.json").write_text(json.dumps(m))


def test_default_caller_is_the_prepared_onnx_export(cache):
    from mobile_actions.hybrid.device import HybridError
    from mobile_actions.hybrid.models import resolve_caller
    from mobile_actions.runtime import Caller

    with pytest.raises(HybridError, match=r"run `mobile-actions model prepare`.*--torch"):
        resolve_caller("default")
    _prepared(cache / f"onnx-{DEFAULT_QUANT}")
    said = []
    caller = resolve_caller("default", said.append)
    assert isinstance(caller, Caller) and caller.folder == cache / f"onnx-{DEFAULT_QUANT}"
    assert said and said[0].startswith("caller: ONNX default")
    m = json.loads((cache / f"onnx-{DEFAULT_QUANT}" / "manifest.json").read_text())
    (cache / f"onnx-{DEFAULT_QUANT}" / "manifest.json").write_text(json.dumps({**m, "adapter_sha256": "0" * 64}))
    with pytest.raises(HybridError, match="another version of the bundled adapter.*model prepare"):
        resolve_caller("default")


def test_torch_only_when_asked(cache, monkeypatch):
    import mobile_actions.caller.greedy as greedy
    from mobile_actions.hybrid.device import HybridError
    from mobile_actions.hybrid.models import resolve_caller
    from mobile_actions.runtime import Caller

    class FakeTorch:
        def __init__(self, spec, constrained=True):
            self.spec, self.constrained, self.warnings = spec, constrained, []

    monkeypatch.setattr(greedy, "TorchCaller", FakeTorch)
    assert resolve_caller("default", torch=True).spec == "default"
    assert resolve_caller("torch:default").spec == "default"           # run --torch / bench hybrid --torch
    assert resolve_caller("torch:runs/adapter").spec == "runs/adapter"
    assert resolve_caller("runs/adapter").spec == "runs/adapter"        # no export of a checkpoint: PyTorch
    folder = tiny_export("fp32")
    assert isinstance(resolve_caller(str(folder)), Caller)              # an export folder: ONNX
    with pytest.raises(HybridError, match="ONNX export"):
        resolve_caller("torch:" + str(folder))


def test_run_and_bench_hybrid_pass_torch_in_the_spec():
    from mobile_actions.cli.hybrid import torch_spec

    assert torch_spec("default", False) == "default"
    assert torch_spec("default", True) == "torch:default"
    assert torch_spec("oracle", True) == "oracle"


def test_call_without_a_prepared_export_says_to_prepare(cache, capsys):
    from mobile_actions.cli.main import main

    assert main(["call", "turn on the flashlight"]) == 2
    err = capsys.readouterr().err
    assert "mobile-actions model prepare" in err and str(cache / f"onnx-{DEFAULT_QUANT}") in err
    _prepared(cache / f"onnx-{DEFAULT_QUANT}")
    assert main(["call", "turn on the flashlight", "--model", "default", "--json"]) in (0, 1)
    assert '"calls"' in capsys.readouterr().out


def test_prepare_builds_once_and_force_rebuilds(cache, monkeypatch):
    import mobile_actions.recipes.export_onnx as ex

    built = []

    def fake_run(cfg, progress=None):
        assert (cfg.model, cfg.quant) == ("default", "q8")
        built.append(cfg.out)
        _prepared(ex.Path(cfg.out))
        return ex.ExportResult(ex.Path(cfg.out), {}, {"fp32": {"equal": True}})

    monkeypatch.setattr(ex, "run", fake_run)
    out = cache / f"onnx-{DEFAULT_QUANT}"
    lines = []
    assert ex.prepare_default(out, progress=lines.append) == (out, True)
    assert built == [str(cache / "onnx-q8.partial")] and (out / "manifest.json").is_file()
    assert not (cache / "onnx-q8.partial").exists()
    assert ex.prepare_default(out, progress=lines.append) == (out, False)     # current: skipped
    assert len(built) == 1 and "is current" in lines[-1]
    assert ex.prepare_default(out, force=True) == (out, True) and len(built) == 2
    m = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**m, "adapter_sha256": "0" * 64}))
    assert ex.prepare_default(out) == (out, True) and len(built) == 3          # another adapter: rebuilt


def test_new_grounding_policies_are_copied_not_rebuilt(cache, monkeypatch):
    import mobile_actions.recipes.export_onnx as ex
    from mobile_actions.runtime.prepared import prepared_export

    monkeypatch.setattr(ex, "run", lambda cfg, progress=None: pytest.fail("rebuilt"))
    out = _prepared(cache / f"onnx-{DEFAULT_QUANT}")
    assert prepared_export() == out
    (out / "grounding.json").write_text("{}")
    with pytest.raises(NotPreparedError, match="older grounding policies.*model prepare"):
        prepared_export()
    lines = []
    assert ex.prepare_default(out, progress=lines.append) == (out, False) and "refreshed" in lines[-1]
    assert (out / "grounding.json").read_bytes() == (BUNDLED_ADAPTER / "grounding.json").read_bytes()
    assert prepared_export() == out


def test_the_default_navigator_runs_on_its_prepared_export(cache, tmp_path, monkeypatch):
    """`--navigator default`: the bundled text navigator's export when it is current (judged by the adapter's
    digest, wherever the package lives), else the adapter itself; nothing bundled: no navigator, said so."""
    import mobile_actions.navigator as navpkg
    from mobile_actions.hybrid import models
    from mobile_actions.runtime.prepared import bundled_adapter_sha256, navigator_onnx_dir, stale_reason

    adapter = tmp_path / "navigator-lora"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    (adapter / "adapter_model.safetensors").write_bytes(b"weights")
    monkeypatch.setattr(navpkg, "TEXT_NAVIGATOR_DIR", adapter)
    folder = _prepared(navigator_onnx_dir(), source_model=str(adapter), adapter_sha256=bundled_adapter_sha256(adapter))
    assert stale_reason(folder, adapter=adapter) is None
    seen = []
    monkeypatch.setattr(models, "resolve_caller", lambda spec, *a, **k: seen.append(spec) or object())
    nav, line = models.resolve_navigator("default")
    assert isinstance(nav, models.TextNavigator) and seen == [str(folder)]

    (adapter / "adapter_model.safetensors").write_bytes(b"retrained")          # the export is stale now
    assert "another version" in stale_reason(folder, adapter=adapter)
    models.resolve_navigator("default")
    assert seen[-1] == str(adapter)

    monkeypatch.setattr(navpkg, "TEXT_NAVIGATOR_DIR", tmp_path / "empty")
    nav, line = models.resolve_navigator("default")
    assert nav is None and "no bundled navigator" in line


def test_auto_takes_the_mobile_actions_caller_for_its_tools_and_the_general_one_for_any_other(cache, capsys):
    """`--model auto` (the default): the default caller's export for the seven tools (and operate_screen), the
    general caller's for any other catalogue; an unprepared general export says to run `model prepare`."""
    from mobile_actions.caller.model import GENERAL_ADAPTER
    from mobile_actions.cli.main import main
    from mobile_actions.hybrid import models
    from mobile_actions.hybrid.device import HybridError
    from mobile_actions.runtime.prepared import (auto_caller, bundled_adapter_sha256, general_onnx_dir,
                                                 prepared_caller)

    assert auto_caller([]) == auto_caller(["send_email", "operate_screen"]) == "default"
    assert auto_caller(["send_email", "set_alarm"]) == auto_caller(["ѕend_email"]) == "general"
    default = _prepared(cache / f"onnx-{DEFAULT_QUANT}")
    with pytest.raises(NotPreparedError, match="no export at .*onnx-general.*model prepare"):
        prepared_caller("auto", ["set_alarm"])
    with pytest.raises(HybridError, match="model prepare"):
        models.resolve_caller("general")
    general = _prepared(general_onnx_dir(), source_model=str(GENERAL_ADAPTER),
                        adapter_sha256=bundled_adapter_sha256(GENERAL_ADAPTER))
    shutil.copyfile(GENERAL_ADAPTER / "grounding.json", general / "grounding.json")
    assert prepared_caller("auto", ["set_alarm"]) == general and prepared_caller("auto", ["send_email"]) == default
    assert prepared_caller("general") == general and prepared_caller("default", ["set_alarm"]) == default
    assert models.resolve_caller("auto", tool_names=["set_alarm"]).folder == general
    with pytest.raises(ValueError, match="expected one of auto, default, general"):
        prepared_caller("genral")
    (general / "grounding.json").write_text("{}")
    assert main(["call", "--tools", "clock_messages", "set an alarm at 7"]) == 2
    assert "older grounding policies than the general caller" in capsys.readouterr().err
