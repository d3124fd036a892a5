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


# ------------------------------------------------------------------------------------------ BFCL / Gorilla docs
BFCL_DOC = {"name": "geometry.triangle_area", "description": "Area of a triangle.", "parameters": {
    "type": "dict", "required": ["base", "height"], "properties": {
        "base": {"type": "float", "description": "The base."},
        "height": {"type": "FLOAT", "description": "The height."},
        "corners": {"type": "tuple", "items": {"type": "float"}, "description": "Corner angles."},
        "label": {"type": "any", "description": "Anything.", "default": "None"},
        "style": {"type": "dict", "properties": {"color": {"type": "string"}}, "description": "How to draw it."},
        "scale": {"type": "integer", "description": "Scale.", "optional": True, "default": 1}}}}


def test_bfcl_function_docs_load_as_they_are():
    tool = Catalogue.from_json([BFCL_DOC])["geometry.triangle_area"]
    props = tool.properties
    assert tool.parameters["type"] == "object" and tool.required == ["base", "height"]
    assert [props[k]["type"] for k in ("base", "height", "corners", "label", "style", "scale")] == \
        ["number", "number", "array", "string", "object", "integer"]
    assert props["corners"]["items"] == {"type": "number"}
    assert props["style"]["properties"]["color"] == {"type": "string"}
    assert props["label"]["default"] == "None" and props["scale"]["optional"] is True   # kept verbatim


def test_a_bfcl_question_loads_as_the_catalogue_of_its_functions(tmp_path):
    path = tmp_path / "question.json"
    path.write_text(json.dumps({"id": "q_0", "question": [[{"role": "user", "content": "..."}]],
                                "function": [BFCL_DOC, {**BFCL_DOC, "name": "geometry_triangle_area"}]}))
    assert load_catalogue(path).names == ["geometry.triangle_area", "geometry_triangle_area"]


def test_dotted_names_are_written_and_read_back_as_they_are():
    from mobile_actions import wire
    from mobile_actions.calls import ToolCall, validate_call

    cat = Catalogue.from_json([BFCL_DOC])
    call = ToolCall("geometry.triangle_area", {"base": 3, "height": 4.5, "corners": [90, 45.0, 45]})
    text = wire.render_call(call)
    assert text.startswith("<start_function_call>call:geometry.triangle_area{")
    assert wire.parse(text).calls == [call] and validate_call(call, cat) == []
    assert "declaration:geometry.triangle_area{" in wire.render([{"role": "user", "content": "hi"}], cat)


def test_an_unknown_gorilla_type_names_the_known_ones():
    doc = {**BFCL_DOC, "parameters": {"type": "dict", "properties": {"x": {"type": "HashMap"}}}}
    with pytest.raises(CatalogueError, match=r"tool 'geometry.triangle_area': parameters.x: field 'type': unknown "
                                             r"type 'HashMap' \(known: any, array, boolean, dict, float"):
        Catalogue.from_json([doc])


def test_bfcl_shaped_catalogues_keep_the_bounds():
    from mobile_actions.catalog import MAX_TOOLS

    many = [{**BFCL_DOC, "name": f"math.f{i}"} for i in range(MAX_TOOLS + 1)]
    with pytest.raises(CatalogueError, match=f"{MAX_TOOLS + 1} tools; a catalogue holds at most {MAX_TOOLS}"):
        Catalogue.from_json({"id": "q", "function": many})
    with pytest.raises(CatalogueError, match="U\\+0455"):    # a Cyrillic ѕ in a dotted name
        Catalogue.from_json([{**BFCL_DOC, "name": "math.\u0455um"}])
