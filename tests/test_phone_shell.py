"""The virtual phone's shell: POSIX quoting and operators, commands recorded as argv lists."""

import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_actions.android.phone import VirtualPhone


@pytest.fixture(scope="module")
def phone():
    return VirtualPhone()


def run(phone, script):
    phone.clear_log()
    r = phone.run(script)
    return r, phone.state.commands


def test_quoting_and_operators(phone):
    r, log = run(phone, "echo 'a;b' \"c $? d\" e\\ f && false || echo yes; echo X4EXIT:$?")
    assert r.stdout == b"a;b c 0 d e f\nyes\nX4EXIT:0\n"
    assert log == [["echo", "a;b", "c 0 d", "e f"], ["false"], ["echo", "yes"], ["echo", "X4EXIT:0"]]


def test_unknown_command_is_not_found_127(phone):
    r, log = run(phone, "frobnicate --now; echo $?")
    assert r.stderr == b"/system/bin/sh: frobnicate: not found\n"
    assert r.stdout == b"127\n"
    r, _ = run(phone, "frobnicate")
    assert r.exit_code == 127


def test_command_substitution_runs_through_the_shell_and_is_recorded(phone):
    r, log = run(phone, "echo $(echo inner) `echo tick`")
    assert r.stdout == b"inner tick\n"
    assert ["echo", "inner"] in log and ["echo", "tick"] in log


@pytest.mark.parametrize("script", ["echo 'open", "echo )", "; ls", "echo $((1+1))", "&& x", "echo `x", "(echo"])
def test_syntax_errors_answer_and_run_nothing(phone, script):
    r, log = run(phone, script)
    assert r.exit_code == 1 and b"syntax error" in r.stderr
    assert log == []


def test_redirections_and_pipes(phone):
    r, _ = run(phone, "echo one > /data/local/tmp/f; echo two >> /data/local/tmp/f; cat < /data/local/tmp/f | cat")
    assert r.stdout == b"one\ntwo\n"
    r, _ = run(phone, "ls /nope 2>/dev/null; echo $?")
    assert r.stdout == b"1\n" and r.stderr == b""
    r, _ = run(phone, "echo to-err >&2")
    assert r.stderr == b"to-err\n" and r.output == b"to-err\n"


def test_exit_and_sh_c(phone):
    r, _ = run(phone, "sh -c 'echo in; exit 3'; echo $?; exit 4; echo never")
    assert r.stdout == b"in\n3\n" and r.exit_code == 4


def test_interleaved_output_for_shell_v1(phone):
    r, _ = run(phone, "echo a; nope; echo b")
    assert r.output == b"a\n/system/bin/sh: nope: not found\nb\n"


ARG = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(ARG, min_size=1, max_size=6))
def test_shlex_quoted_argv_arrives_verbatim(phone, argv):
    """Whatever adbutils' quoting produces, the phone sees exactly the same argument list."""
    _, log = run(phone, " ".join(shlex.quote(a) for a in ["echo", *argv]) + "; echo X4EXIT:$?")
    assert log == [["echo", *argv], ["echo", "X4EXIT:0"]]
