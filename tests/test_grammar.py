"""The call grammar: every constrained output parses and validates; forced tokens; datetime pattern."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mobile_actions import wire
from mobile_actions.calls import ToolCall, validate_call
from mobile_actions.catalog import Catalogue, load_catalogue
from mobile_actions.decoding.constraint import Constraint, constrain_sequence
from mobile_actions.decoding.grammar import CallGrammar, accepts
from mobile_actions.decoding.strings import datetime_prefix_ok
from mobile_actions.decoding.tokens import TokenTable, pick

STOP = (1, 106, 50)


@pytest.fixture(scope="module")
def tok():
    from tests.tiny import build_tokenizer

    return build_tokenizer()


@pytest.fixture(scope="module")
def table(tok):
    return TokenTable.from_tokenizer(tok, STOP)


@pytest.fixture(scope="module")
def cat():
    return load_catalogue("mobile_actions")


EXTRA = Catalogue.from_json([{"name": "set_alarm", "description": "d", "parameters": {
    "type": "object", "properties": {
        "hour": {"type": "integer"}, "volume": {"type": "number"}, "vibrate": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["loud", "quiet", "lo"]},
        "days": {"type": "array", "items": {"type": "string", "enum": ["mon", "tue"]}},
        "when": {"type": "string", "description": "in the format YYYY-MM-DDTHH:MM:SS"}},
    "required": ["hour", "mode"]}}])


def test_accepts_rendered_valid_calls(cat):
    g = CallGrammar(cat)
    for call in [ToolCall("turn_on_flashlight", {}),
                 ToolCall("send_email", {"to": "a@b.c", "subject": "Hi", "body": "x, y {z}"}),
                 ToolCall("create_calendar_event", {"title": "T", "datetime": "2024-02-29T23:59:00"})]:
        assert not validate_call(call, cat)
        assert accepts(g, wire.render_call(call))
    two = wire.render_call(ToolCall("turn_on_flashlight", {})) + wire.render_call(ToolCall("show_map", {"query": "q"}))
    assert accepts(g, two)


@pytest.mark.parametrize("call", [
    ToolCall("no_such_tool", {}),
    ToolCall("send_email", {"to": "a@b.c"}),                                   # missing required
    ToolCall("send_email", {"to": "a", "subject": "s", "cc": "x"}),            # unknown argument
    ToolCall("create_calendar_event", {"title": "T", "datetime": "2023-02-29T10:00:00"}),  # not a date
    ToolCall("create_calendar_event", {"title": "T", "datetime": "tomorrow"}),
])
def test_rejects_invalid_calls(cat, call):
    assert not accepts(CallGrammar(cat), wire.render_call(call))


def test_types_enum_array_bool_number():
    g = CallGrammar(EXTRA)
    good = ToolCall("set_alarm", {"hour": 7, "mode": "lo", "volume": -0.5, "vibrate": True, "days": ["mon", "tue"],
                                  "when": "2025-12-31T07:00:00"})
    assert accepts(g, wire.render_call(good))
    for bad in [{"hour": 7.5, "mode": "lo"}, {"hour": 7, "mode": "l"}, {"hour": 7, "mode": "lo", "vibrate": 1},
                {"hour": 7, "mode": "lo", "days": ["wed"]}, {"hour": "7", "mode": "lo"}]:
        assert not accepts(g, wire.render_call(ToolCall("set_alarm", bad))), bad


def test_datetime_prefixes_never_dead_end():
    assert datetime_prefix_ok("2024-02-2")
    assert not datetime_prefix_ok("2023-02-3")          # no 30th/31st of February
    assert datetime_prefix_ok("2024-04-3") and not datetime_prefix_ok("2024-04-31")
    assert not datetime_prefix_ok("2024-13") and not datetime_prefix_ok("2024-00")
    assert datetime_prefix_ok("000") and not datetime_prefix_ok("0000")   # year 1 is the first
    assert not datetime_prefix_ok("2024-01-01T24") and datetime_prefix_ok("2024-01-01T23:59:59")


def _decode(tok, ids):
    return tok.decode([i for i in ids if i not in STOP], skip_special_tokens=False)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), which=st.sampled_from(["mobile", "extra"]), boost=st.floats(0, 8))
@example(seed=2445, which="extra", boost=4.0)   # once wrote the date-time 0000-10-24T14:21:10 (no year 0)
def test_every_constrained_output_parses_and_validates(tok, table, cat, seed, which, boost):
    catalogue = cat if which == "mobile" else EXTRA
    rng = np.random.default_rng(seed)
    logits = [rng.normal(size=table.size).astype(np.float32) for _ in range(64)]
    logits[0][48] += boost          # sometimes a call, sometimes a plain-text reply
    for row in logits:             # make stopping and closing strings likely enough that outputs end
        row[list(STOP)] += boost / 2
        row[52] += boost / 2
    ids = constrain_sequence(CallGrammar(catalogue), table, logits, tokenizer=tok, max_tokens=200)
    if not ids or ids[-1] not in STOP:
        return  # cut off by max_tokens inside a call: the runtime reports that as a problem
    text = _decode(tok, ids)
    parsed = wire.parse(text)  # never raises
    for call in parsed.calls:
        assert validate_call(call, catalogue) == [], (text, call)
    if ids[0] == 48:
        assert parsed.calls and not parsed.text


def test_forced_tokens_cover_unique_continuations(tok, table):
    only = Catalogue.from_json([{"name": "turn_on_flashlight", "description": "d", "parameters": {"type": "object"}}])
    c = Constraint(CallGrammar(only), table, tok)
    c.advance(48)  # <start_function_call>
    forced = c.forced_tokens()
    assert tok.decode(forced, skip_special_tokens=False) == "call:turn_on_flashlight{}<end_function_call>"
    for f in forced:
        c.advance(f)
    assert c.state.can_stop and c.forced_tokens() == []


def test_allowed_sets(tok, table, cat):
    c = Constraint(CallGrammar(cat), table, tok)
    start = c.allowed()
    assert start.dtype == bool and start[48] and start[106] and not start[52]
    c.advance(48)
    forced = c.forced_tokens()
    for f in forced:
        c.advance(f)
    done = tok.decode(forced)          # "call" (the last token before a choice is the model's to write)
    assert "call:".startswith(done) and done != "call:"
    rest = "call:"[len(done):]
    ids = c.allowed()
    names = {tok.decode([int(i)]) for i in ids}
    assert names and all(any((rest + n).startswith(s) for n in cat.names) for s in names)
    # the greedy pick respects the set even when the best logit is elsewhere
    logits = np.zeros(table.size, dtype=np.float32)
    logits[5] = 100
    assert pick(logits, ids) in set(ids.tolist())


def test_constraints_share_a_grammar_per_catalogue_content(table, cat):
    from mobile_actions.decoding.turn import Constraints

    cs = Constraints(table, keep=2)
    a, b = cs.for_tools(cat), cs.for_tools(load_catalogue("mobile_actions"))
    assert a is not b and a.memo is b.memo and a.g is b.g      # fresh state, shared memo
    a.advance(48)
    assert b.state is not a.state                              # requests never share automaton state
    cs.for_tools(EXTRA)
    cs.for_tools(Catalogue.from_json([{"name": "x", "description": "d", "parameters": {"type": "object"}}]))
    assert cs.for_tools(cat).memo is not a.memo                # evicted after `keep` other catalogues


def test_allowed_mask_fits_the_head_width():
    from mobile_actions.decoding.tokens import allowed_mask

    assert allowed_mask(np.array([1, 3, 9]), 5).tolist() == [False, True, False, True, False]
    assert allowed_mask(np.array([True, False]), 4).tolist() == [True, False, False, False]
    assert allowed_mask(np.array([True, False, True]), 2).tolist() == [True, False]


def test_no_tools_no_call_and_dead_ends_raise(table):
    from mobile_actions.decoding.turn import Constraints

    none = Constraints(table).for_tools(Catalogue.from_json([]))
    start = none.allowed()
    assert not start[48] and start[106]          # a reply or a stop, never a call that cannot be finished
    from mobile_actions.errors import GrammarDeadEnd

    with pytest.raises(GrammarDeadEnd, match="dead end"):
        pick(np.zeros(table.size, dtype=np.float32), np.zeros(table.size, dtype=bool))


@pytest.mark.parametrize("sources", [
    ("and I need to find 155 boulevard Saint-Germain, Paris, ",),     # a clause cut off before "pull it up"
    ("thanks 🙏", "email ana — "), ("  ,;  ", "x"), ("a, b;  c . ",), ("um, ", "x")])
@pytest.mark.parametrize("wholes, unbroken, ends_before", [
    ((), False, ()), (("a b", "thanks!", "Paris, France"), False, ()), ((), True, ()), ((), True, ("in", "DATE"))])
def test_a_span_never_reaches_a_dead_end(sources, wholes, unbroken, ends_before):
    """Every character the span grammar offers leads to a value it can finish: walked at random many times,
    each walk ends on the closing escape."""
    from random import Random

    from mobile_actions.decoding.grammar import Str, span_spec
    from mobile_actions.decoding.spans import READING

    end = object()
    rng = Random(0)
    for _ in range(300):
        state = Str(span_spec(sources + ("Mehndi at Aunty Farah's with Liam",), wholes, unbroken,
                              frozenset(ends_before), READING), "", end)
        for _ in range(200):
            syms = state.next_syms()
            assert syms, repr(state.content)
            sym = rng.choice(sorted(syms))
            state = state.step(sym)
            if state is end:
                break
            assert state is not None
        else:
            pytest.fail("no end")


def test_a_span_does_not_start_on_a_joining_or_filler_word():
    from mobile_actions.decoding.grammar import span_spec
    from mobile_actions.decoding.spans import READING

    spec = span_spec(("Hmm, and email Andrea then the Andes",), bounds=READING)
    starts = spec.continuations("")
    assert "H" not in starts and "e" in starts and "A" in starts and "t" in starts   # "the", not "then"
    assert "n" not in spec.continuations("a") and spec.continuations("An") == {"d"}   # "and" is not, "Andrea" is
    assert not spec.whole_span("then") and spec.whole_span("email Andrea")


def test_a_span_source_of_only_joins_and_fillers_leaves_the_value_unconstrained():
    """"um, tomorrow at 9" less its date leaves "um, ": no value can be copied from it, so the grammar must not
    open a span that can never close (the decoder would stop on a dead end)."""
    from mobile_actions.decoding.grammar import S_ESC, Str, value_state
    from mobile_actions.decoding.spans import READING

    state = value_state({"type": "string", "x-span": ["um, ", ", and then "]}, object(), READING).step(S_ESC)
    assert isinstance(state, Str) and state.spec.kind == "free"
    state = value_state({"type": "string", "x-span": ["um, Ana"]}, object(), READING).step(S_ESC)
    assert state.spec.kind == "span" and state.next_syms() == {"A"}


def test_an_unbroken_span_does_not_end_where_a_phrase_goes_on_with_it():
    """"pls add Mehndi at Aunty Farah's on Saturday at 5": a title ends before "on Saturday at 5", not before
    "at Aunty Farah's" (`GOES_ON_RE`); "Dinner at 7" may still be "Dinner"."""
    from mobile_actions.decoding.grammar import span_spec
    from mobile_actions.decoding.spans import READING

    spec = span_spec(("pls add Mehndi at Aunty Farah's ", "Dinner at 7 for me"), unbroken=True, bounds=READING)
    assert not spec.whole_span("Mehndi") and spec.whole_span("Mehndi at Aunty Farah's")
    assert spec.whole_span("Dinner") and spec.whole_span("Dinner at 7")
    assert span_spec(("pls add Mehndi at Aunty Farah's ",), bounds=READING).whole_span("Mehndi")


@pytest.mark.parametrize("text, value, cls", [
    ("put Dentist apointment for Ruby in my calender", "Dentist", "apointment"),
    ("put Dentist apointment for Ruby in my calender", "Dentist apointment for Ruby", "in"),
    ("subject Late check-in tonight and say hi", "Late check-in", "DATE"),
    ("subject Late check-in tonight and say hi", "Late check", "INSIDE"),
    ("add Stats study group w/ Maya tmrw", "Stats study group w", "INSIDE"),
    ("subject Sick day - Tomasz", "Sick day", "INSIDE"),
    ("subject Running late – tram breakdown, then map it", "Running late", "INSIDE"),
    ("subject sick day - My flight lands at 3:45. thanks", "sick day", "DASH"),
    ("Camp Nou - where is it?", "Camp Nou", "DASH"),
    ("Ana Lê - +31 6 39560634, save her", "Ana Lê", "DASH"),
    ("subject Quick question - mail this to f@x.co", "Quick question", "DASH"),
    ("show Casa Lucía, thanks", "Casa Lucía", "PUNCT"),
    ("the address of Auckland with seoyeon@x.com", "Auckland", "JOIN"),
    ("Parents' evening at Oakwood is Thursday", "Parents' evening at Oakwood", "JOIN"),
    ("flight KL240 save it in the calendar", "flight KL240", "JOIN"),
    ("Pantheon pls", "Pantheon pls", "END")])
def test_what_a_value_ends_before(text, value, cls):
    from mobile_actions.decoding.spans import end_class

    assert end_class(text, text.index(value) + len(value)) == cls


def test_a_span_ends_only_before_what_its_values_end_before():
    """A title seen to end only before dates, "in" (my calendar) and punctuation is not "Dentist" in "put
    Dentist apointment for Ruby in my calender on the 12th": it goes on to the next such place. Without the
    learned classes it may end anywhere."""
    from mobile_actions.decoding.grammar import span_spec
    from mobile_actions.decoding.spans import READING

    text = ("put Dentist apointment for Ruby in my calender on the 12th at 3:15, thanks",)
    spec = span_spec(text, ends_before=frozenset({"in", "DATE"}), bounds=READING)
    assert not spec.whole_span("Dentist") and not spec.whole_span("Dentist apointment")
    assert spec.whole_span("Dentist apointment for Ruby") and spec.whole_span("Dentist apointment for Ruby in my calender")
    assert spec.whole_span("at 3:15")                                   # before punctuation
    assert " " in spec.continuations("Dentist")
    assert span_spec(text, bounds=READING).whole_span("Dentist")


def test_a_span_narrowed_to_a_clause_keeps_what_the_clause_ends_on():
    """A call owed for a clause copies from that clause; its closing "?" stays with it."""
    from mobile_actions.decoding.turn import spans_within

    request = "open the wifi settings, then email ana@x.com subject Seat body Could I move to an aisle seat?"
    clause = "email ana@x.com subject Seat body Could I move to an aisle seat"
    narrowed = spans_within({"type": "string", "x-span": ["open the wifi settings, ", " subject Seat body Could I "
                                                           "move to an aisle seat?"]}, request, clause)
    assert narrowed == {"type": "string", "x-span": [" subject Seat body Could I move to an aisle seat?"]}
    assert spans_within({"x-span": ["open the wifi settings, "]}, request, clause) is None


def test_a_number_ends():
    """A model that writes "1.8400000..." cannot run to the token limit: digits stop after a bound."""
    from mobile_actions.decoding.grammar import MAX_FRACTION_DIGITS, MAX_WHOLE_DIGITS, Num

    end = object()
    s = Num(False, "1." + "0" * MAX_FRACTION_DIGITS, end)
    assert not s._chars()
    s = Num(True, "9" * MAX_WHOLE_DIGITS, end)
    assert not s._chars()
    assert "5" in Num(False, "12.5", end)._chars()


def test_numbers_keep_within_the_schemas_minimum_and_maximum():
    """hour 0-23: no sign, no 24 or 100; seconds 1-86400: no leading 0; unbounded numbers as before."""
    from mobile_actions.decoding.grammar import Num, value_state

    class End:
        def step(self, sym):
            return self if sym == "}" else None

        def next_syms(self):
            return frozenset("}")

    def accepts(schema, text):
        st = value_state(schema, End())
        for ch in text + "}":
            st = st.step(ch)
            if st is None:
                return False
        return True

    hour = {"type": "integer", "minimum": 0, "maximum": 23}
    assert accepts(hour, "0") and accepts(hour, "23") and accepts(hour, "7")
    assert not accepts(hour, "-1") and not accepts(hour, "24") and not accepts(hour, "100")
    secs = {"type": "integer", "minimum": 1, "maximum": 86400}
    assert accepts(secs, "600") and not accepts(secs, "0") and not accepts(secs, "86401")
    assert accepts({"type": "integer"}, "-630") and accepts({"type": "number"}, "2.5")
    assert isinstance(value_state(hour, End()), Num)


def test_an_array_ends_at_its_max_items_or_its_items_choices():
    """A list of choices names each once at most: "Monday, ..., Sunday, Tuesday, Monday, ..." ends at 7."""
    g = CallGrammar(EXTRA)
    assert accepts(g, wire.render_call(ToolCall("set_alarm", {"hour": 7, "mode": "lo", "days": ["mon", "tue"]})))
    assert not accepts(g, wire.render_call(ToolCall("set_alarm", {"hour": 7, "mode": "lo",
                                                                  "days": ["mon", "tue", "mon"]})))
    capped = Catalogue.from_json([{"name": "tag", "description": "d", "parameters": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}, "required": ["tags"]}}])
    assert accepts(CallGrammar(capped), wire.render_call(ToolCall("tag", {"tags": ["a", "b"]})))
    assert not accepts(CallGrammar(capped), wire.render_call(ToolCall("tag", {"tags": ["a", "b", "c"]})))


def test_a_cached_token_table_loads_as_it_was_built(tmp_path):
    """The cache joins each blob of strings with a character none holds: a token holding NUL (as byte
    tokens do) moves the separator on, and empty and missing strings come back as they were."""
    strings = ["a", None, "", "ab\x00c", "b", "\ue000", "ba"]
    opaque = np.zeros(len(strings), dtype=bool)
    table = TokenTable(strings, opaque, (1,), {"<start_function_call>": 5})
    table.save(tmp_path / "t.npz", "d1")
    back = TokenTable.load(tmp_path / "t.npz", "d1", (1,), {"<start_function_call>": 5})
    assert back.strings == strings and back.keys == table.keys and back.key_ids.tolist() == table.key_ids.tolist()
    assert back.prefix_range("b") == table.prefix_range("b")
    assert TokenTable.load(tmp_path / "t.npz", "other tokenizer", (1,), {}) is None
