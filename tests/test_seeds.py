"""Rows from seed catalogues: every row checked, split by request, multiplied by catalogue."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mobile_actions.datagen.seeds import load_seeds, part_of, seed_rows
from mobile_actions.errors import DatasetError

DEV = {"role": "developer", "content": "Current date and time given in YYYY-MM-DDTHH:MM:SS format: "
                                      "2026-03-14T09:26:53\nDay of week is Saturday\n"}


def _tool(name: str, arg: str) -> dict:
    return {"function": {"name": name, "description": f"{name}.", "parameters": {
        "type": "OBJECT", "properties": {arg: {"type": "STRING", "description": arg}}, "required": [arg]}}}


def _domain(folder: Path, name: str, tools: list[dict], rows: list[tuple[str, list[dict]]]) -> None:
    (folder / f"{name}.tools.json").write_text(json.dumps(tools))
    lines = []
    for request, calls in rows:
        answer = ({"role": "assistant", "tool_calls": [{"function": c} for c in calls]} if calls
                  else {"role": "assistant", "content": "Okay."})
        lines.append(json.dumps({"metadata": "train", "messages": [DEV, {"role": "user", "content": request}, answer]}))
    (folder / f"{name}.rows.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture()
def seeds(tmp_path: Path) -> Path:
    _domain(tmp_path, "music", [_tool("play_song", "title"), _tool("queue.add", "title")],
            [(f"play song {i}", [{"name": "play_song", "arguments": {"title": f"song {i}"}}]) for i in range(30)]
            + [("my sister said she'd play it", [])])
    _domain(tmp_path, "notes", [_tool("add_note", "text"), _tool("delete_note", "id"), _tool("pin_note", "id")],
            [(f"note {i}", [{"name": "add_note", "arguments": {"text": f"note {i}"}}]) for i in range(30)])
    return tmp_path


def test_rows_come_with_their_domain_alone_and_beside_another(seeds):
    domains = load_seeds(seeds)
    assert [d.name for d in domains] == ["music", "notes"] and len(domains[0].rows) == 31
    rows = seed_rows(domains, part="all", distractors=1)
    assert len(rows) == 2 * 61
    music = [r for r in rows if r["meta"]["domain"] == "music"]
    sets = {tuple(t["function"]["name"] for t in r["tools"]) for r in music}
    assert ("play_song", "queue.add") in sets and any(len(s) == 3 and s[2] in ("add_note", "delete_note", "pin_note")
                                                      for s in sets)
    extra = {r["tools"][-1]["function"]["name"] for r in music if r["meta"]["variant"] == "distractors"}
    assert len(extra) == 1   # one choice per domain: its rows share a prompt prefix


def test_missing_variant_takes_out_the_called_tools_and_answers_with_no_call(seeds):
    rows = seed_rows(load_seeds(seeds), part="all", variants=("missing",))
    assert len(rows) == 60   # asked rows only: the music row that asks for nothing has no missing variant
    for r in rows:
        names = [t["function"]["name"] for t in r["tools"]]
        assert "play_song" not in names and "add_note" not in names and names
        assert r["messages"][-1]["tool_calls"] == [] and r["messages"][-1]["content"]
        assert [m["role"] for m in r["messages"]] == ["developer", "user", "assistant"]
    with pytest.raises(ValueError, match="unknown variant"):
        seed_rows(load_seeds(seeds), variants=("gone",))


def test_train_and_heldout_split_every_request_one_way(seeds):
    domains = load_seeds(seeds)
    train, held = seed_rows(domains, part="train"), seed_rows(domains, part="heldout")
    req = lambda r: r["messages"][1]["content"]   # noqa: E731
    assert not {req(r) for r in train} & {req(r) for r in held}
    assert len(train) + len(held) == len(seed_rows(domains, part="all"))
    assert all(part_of(r["meta"]["domain"], r) == "heldout" for r in held)


def test_a_bad_seed_row_names_its_file_and_line(seeds):
    with open(seeds / "notes.rows.jsonl", "a") as f:
        f.write(json.dumps({"messages": [DEV, {"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
            {"function": {"name": "add_note", "arguments": {"txt": "x"}}}]}]}) + "\n")
    with pytest.raises(DatasetError, match=r"notes\.rows\.jsonl:31"):
        load_seeds(seeds)
    with pytest.raises(DatasetError, match="no seed catalogues"):
        load_seeds(seeds / "nothing")


def test_the_shipped_seeds_load_and_validate():
    domains = load_seeds(Path(__file__).resolve().parents[1] / "datasets" / "seed-catalogues")
    assert len(domains) >= 50 and sum(len(d.rows) for d in domains) >= 3000
    assert sum(len(d.tools) for d in domains) >= 500


def test_framed_variant_writes_each_asked_request_into_a_message_that_asks_nothing_now(seeds, tmp_path):
    from mobile_actions.datagen.seeds import load_framings

    framings = load_framings()
    rows = seed_rows(load_seeds(seeds), part="all", variants=("framed",), seed=1)
    assert len(rows) == 60   # asked rows only
    asked = {r["messages"][1]["content"] for r in seed_rows(load_seeds(seeds), part="all", variants=("alone",))
             if r["messages"][-1].get("tool_calls")}
    kinds = set()
    for r in rows:
        kind = r["kind"].split(":", 1)[1]
        kinds.add(kind)
        said, reply = r["messages"][1]["content"], r["messages"][-1]
        assert any(t.replace("{request}", q) == said for t in framings.kinds[kind] for q in asked)
        assert reply["tool_calls"] == [] and reply["content"] == framings.replies[kind]
    assert len(kinds) > 1
    bad = tmp_path / "framings.json"
    bad.write_text(json.dumps({"kinds": {"pass_on": ["tell her {request} and {this}"]}, "replies": {"pass_on": "ok"}}))
    with pytest.raises(DatasetError, match="once and no other braces"):
        load_framings(bad)


def test_details_variant_adds_what_the_tool_cannot_hold_and_keeps_the_call(tmp_path):
    from mobile_actions.datagen.seeds import load_details

    when = {"type": "STRING", "description": "When, in the format YYYY-MM-DDTHH:MM:SS."}
    book = {"function": {"name": "book", "description": "Book a slot.", "parameters": {"type": "OBJECT", "properties": {
        "title": {"type": "STRING", "description": "What it is."}, "at": when}, "required": ["title", "at"]}}}
    noted = {"function": {"name": "note", "description": "Note.", "parameters": {"type": "OBJECT", "properties": {
        "title": {"type": "STRING", "description": "What."}, "at": when, "where": {"type": "STRING",
                                                                              "description": "Where."}}}}}
    call = {"name": "book", "arguments": {"title": "dentist", "at": "2026-03-16T09:00:00"}}
    _domain(tmp_path, "slots", [book, noted],
            [(f"book dentist on monday at 9 ({i})", [call]) for i in range(30)]
            + [("note dentist on monday at 9", [{"name": "note", "arguments": {
                "title": "dentist", "at": "2026-03-16T09:00:00"}}])]   # `where` is left: the details could go there
            + [("book dentists on monday at 9 and note it", [call, call])])
    rows = seed_rows(load_seeds(tmp_path), part="all", variants=("details",), seed=3)
    assert len(rows) == 30 and all(r["kind"] == "details" for r in rows)
    details = load_details()
    inline = trailing = 0
    for r in rows:
        said = r["messages"][1]["content"]
        assert r["messages"][2]["tool_calls"] == [{"function": call}]
        inline += any(said.startswith("book dentist") and p in said and said.endswith(")")
                      for p in details.after_name)
        trailing += any(said.endswith(s) for s in details.sentences)
    assert inline and trailing and inline + trailing == 30
    bad = tmp_path / "details.json"
    bad.write_text(json.dumps({"after_name": ["over at the school"], "sentences": []}))
    with pytest.raises(DatasetError, match="'sentences' must be a non-empty list"):
        load_details(bad)


def test_wrapped_variant_keeps_the_calls_of_a_request_wrapped_in_words_people_put_around_an_ask(seeds):
    from mobile_actions.datagen.seeds import WRAPPINGS_FILE, load_framings

    wrappings = load_framings(WRAPPINGS_FILE, replies_needed=False)
    rows = seed_rows(load_seeds(seeds), part="all", variants=("wrapped",), seed=2)
    assert len(rows) == 60   # asked rows only
    for r in rows:
        kind = r["kind"].split(":", 1)[1]
        said, calls = r["messages"][1]["content"], r["messages"][-1]["tool_calls"]
        assert calls and any(t.split("{request}")[0] in said for t in wrappings.kinds[kind])
        assert calls[0]["function"]["arguments"]["text" if "add_note" in str(calls) else "title"] in said
