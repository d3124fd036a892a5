import json

import pytest

from mobile_actions.catalog import Catalogue, CatalogueError, load_catalogue


def test_bundled_catalogue_is_json_schema():
    cat = load_catalogue("mobile_actions")
    assert len(cat) == 7
    email = cat["send_email"]
    assert email.parameters["type"] == "object"
    assert email.properties["to"]["type"] == "string"
    assert email.required == ["to", "subject"]
    assert cat["turn_on_flashlight"].properties == {}


def test_openai_and_mobile_actions_shapes_normalise_to_the_same_tool():
    ma = {"function": {"name": "f", "description": "d", "parameters": {
        "type": "OBJECT", "properties": {"n": {"type": "INTEGER"}, "tags": {"type": "ARRAY", "items": {"type": "STRING"}}},
        "required": ["n"]}}}
    oa = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["n"]}}}
    a, b = Catalogue.from_json([ma]), Catalogue.from_json([oa])
    assert a == b
    assert a["f"].to_mobile_actions() == ma
    assert b["f"].to_openai() == oa


@pytest.mark.parametrize("tools, fragment", [
    ([{"function": {"name": "f", "parameters": {"type": "OBJECT", "properties": {"x": {"type": "STRNG"}}}}}],
     "tool 'f': parameters.x: field 'type': unknown type 'STRNG'"),
    ([{"function": {"name": "f", "parameters": {"type": "OBJECT", "properties": {}, "required": ["x"]}}}],
     "tool 'f': parameters: field 'required': 'x' is not in properties"),
    ([{"function": {"name": "f"}}, {"function": {"name": "f"}}], "tool 'f': duplicate tool name"),
    ([{"function": {"name": "bad name"}}], "field 'name'"),
])
def test_malformed_catalogues_name_tool_and_field(tools, fragment):
    with pytest.raises(CatalogueError) as e:
        Catalogue.from_json(tools, source="cat.json")
    assert fragment in str(e.value)
    assert str(e.value).startswith("cat.json")


def test_load_from_user_file_and_errors(tmp_path):
    p = tmp_path / "mine.json"
    p.write_text(json.dumps([{"type": "function", "function": {"name": "ping", "description": "Ping."}}]))
    assert load_catalogue(p).names == ["ping"]
    (tmp_path / "broken.json").write_text("[\n{")
    with pytest.raises(CatalogueError, match=r"broken.json:2: invalid JSON"):
        load_catalogue(tmp_path / "broken.json")
    with pytest.raises(CatalogueError, match="no catalogue named"):
        load_catalogue("no_such_catalogue")


def test_catalogues_combine_with_plus():
    from mobile_actions.catalog import CatalogueError, load_catalogue

    both = load_catalogue("mobile_actions+operate_screen")
    assert both.names[-1] == "operate_screen" and len(both) == 8
    with pytest.raises(CatalogueError, match="twice"):
        load_catalogue("mobile_actions+mobile_actions")
