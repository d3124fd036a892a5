"""A small POSIX-ish shell for the virtual phone: it parses, it never evaluates Python.

Why a real parser rather than ``str.split``: adbutils joins argument lists with ``shlex.quote`` and
appends ``; echo X4EXIT:$?``, and ``adb shell`` users type ``a && b || c``. The phone must read quoting
exactly as ``/system/bin/sh`` does, *including* the dangerous parts (``;``, ``&&``, ``$(...)``,
backticks, newlines), so that a quoting bug in a caller shows up as an extra recorded command
instead of being hidden by a lenient parser. Every simple command that runs is recorded (argv list).

Supported: words with '...', "...", backslash escapes; ``;`` ``&`` newline ``&&`` ``||`` ``|`` ``!``;
``( ... )`` groups; ``$?`` ``$$`` ``$#`` ``$NAME`` ``${NAME}`` ``${NAME:-word}``; ``$(...)`` and
backticks (run through this same shell); redirections ``< > >> 2> 2>&1 >&2`` on the virtual
filesystem; ``NAME=value`` assignments; ``#`` comments; builtins ``echo : true false exit cd export
sh -c``. No globbing, functions, loops or arithmetic: those answer as a syntax error / not found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Protocol

SH = "/system/bin/sh"
MAX_DEPTH = 32


class ShellSyntaxError(Exception):
    pass


class ShellExit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


# ---------------------------------------------------------------------------- syntax tree
@dataclass
class Part:
    kind: str          # "lit" | "param" | "cmd"
    value: object      # str for lit/param (param: "NAME" or "NAME:-default"), list for cmd (parsed list)
    quoted: bool


@dataclass
class Word:
    parts: list[Part] = field(default_factory=list)

    def literal(self) -> str | None:
        """The word's text when it has no expansions (used for assignments and redirection ops)."""
        if all(p.kind == "lit" for p in self.parts):
            return "".join(str(p.value) for p in self.parts)
        return None


@dataclass
class Redirect:
    fd: int
    op: str            # ">", ">>", "<", ">&"
    target: Word


@dataclass
class Simple:
    assigns: list[tuple[str, Word]]
    words: list[Word]
    redirects: list[Redirect]


@dataclass
class Group:
    body: list         # a parsed list
    redirects: list[Redirect]


@dataclass
class Pipeline:
    commands: list     # Simple | Group
    negate: bool = False


@dataclass
class AndOr:
    first: Pipeline
    rest: list[tuple[str, Pipeline]]   # ("&&" | "||", pipeline)


# ---------------------------------------------------------------------------- tokenizer
_PLAIN = re.compile(r"[^ \t\n'\"\\$`;&|()<>]+")
_DQ_PLAIN = re.compile(r'[^"\\$`]+')
_IFS = re.compile(r"[ \t\n]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OP_RE = re.compile(r"&&|\|\||>>|>&|<&|[;&|()<>\n]")


@dataclass
class Tok:
    kind: str           # "word" | "op"
    word: Word | None = None
    op: str = ""
    io_number: int | None = None


class _Lexer:
    def __init__(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ShellSyntaxError("nesting too deep")
        self.s = text
        self.i = 0
        self.depth = depth

    def tokens(self, until_paren: bool = False) -> list[Tok]:
        """Tokenize; with until_paren, stop after the ``)`` that closes a ``$(`` (parens balanced)."""
        s, out, level = self.s, [], 0
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
                continue
            if c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
                continue
            if c == "#":
                nl = s.find("\n", self.i)
                self.i = len(s) if nl < 0 else nl
                continue
            m = _OP_RE.match(s, self.i)
            if m is not None:
                op = m.group()
                if until_paren and op == ")" and level == 0:
                    self.i += 1
                    return out
                level += (op == "(") - (op == ")")
                self.i += len(op)
                out.append(Tok("op", op=op))
                continue
            word = self._word()
            if self.i < len(s) and s[self.i] in "<>":
                text = word.literal()
                if text is not None and text.isdigit():
                    out.append(Tok("io", io_number=int(text)))
                    continue
            out.append(Tok("word", word=word))
        if until_paren:
            raise ShellSyntaxError("unexpected end of file (expecting ')')")
        return out

    def _word(self) -> Word:
        s, parts = self.s, []

        def lit(text: str, quoted: bool) -> None:
            # merge neighbouring literals: shlex.quote("'" * n) yields thousands of tiny pieces
            if parts and parts[-1].kind == "lit" and parts[-1].quoted == quoted:
                parts[-1].value += text
            else:
                parts.append(Part("lit", text, quoted))

        while self.i < len(s):
            c = s[self.i]
            m = _PLAIN.match(s, self.i)
            if m:
                lit(m.group(), False)
                self.i = m.end()
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated quoted string")
                lit(s[self.i + 1:end], True)
                self.i = end + 1
            elif c == '"':
                self.i += 1
                for p in self._double_quoted():
                    lit(p.value, True) if p.kind == "lit" else parts.append(p)
            elif c == "\\":
                if self.i + 1 >= len(s):
                    self.i += 1
                    lit("\\", False)
                elif s[self.i + 1] == "\n":
                    self.i += 2
                else:
                    lit(s[self.i + 1], True)
                    self.i += 2
            elif c == "$":
                parts.append(self._dollar(False))
            elif c == "`":
                parts.append(self._backtick(False))
            else:  # whitespace or an operator ends the word
                break
        return Word(parts)

    def _double_quoted(self) -> list[Part]:
        s, parts, buf = self.s, [], []
        while True:
            if self.i >= len(s):
                raise ShellSyntaxError("unterminated quoted string")
            c = s[self.i]
            if c == '"':
                self.i += 1
                break
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    buf.append(s[self.i + 1])
                self.i += 2
            elif c in "$`":
                if buf:
                    parts.append(Part("lit", "".join(buf), True))
                    buf = []
                parts.append(self._dollar(True) if c == "$" else self._backtick(True))
            else:
                m = _DQ_PLAIN.match(s, self.i)
                j = m.end() if m else self.i + 1
                buf.append(s[self.i:j])
                self.i = j
        if buf or not parts:
            parts.append(Part("lit", "".join(buf), True))
        return parts

    def _dollar(self, quoted: bool) -> Part:
        s = self.s
        self.i += 1
        if self.i >= len(s):
            return Part("lit", "$", quoted)
        c = s[self.i]
        if s.startswith("((", self.i):
            raise ShellSyntaxError("arithmetic expansion is not supported")
        if c == "(":
            self.i += 1
            sub = _Lexer(s, self.depth + 1)
            sub.i = self.i
            toks = sub.tokens(until_paren=True)
            self.i = sub.i
            return Part("cmd", _Parser(toks).parse(), quoted)
        if c == "{":
            end = s.find("}", self.i)
            if end < 0:
                raise ShellSyntaxError("missing '}'")
            inner = s[self.i + 1:end]
            name = inner.split(":-", 1)[0]
            if not (_NAME.fullmatch(name) or name in ("?", "$", "#") or name.isdigit()):
                raise ShellSyntaxError(f"{inner}: bad substitution")
            self.i = end + 1
            return Part("param", inner, quoted)
        if c in "?$#!" or c.isdigit():
            self.i += 1
            return Part("param", c, quoted)
        m = _NAME.match(s, self.i)
        if m:
            self.i = m.end()
            return Part("param", m.group(), quoted)
        return Part("lit", "$", quoted)

    def _backtick(self, quoted: bool) -> Part:
        s, buf = self.s, []
        self.i += 1
        while True:
            if self.i >= len(s):
                raise ShellSyntaxError("unterminated `")
            c = s[self.i]
            if c == "`":
                self.i += 1
                break
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in "$`\\":
                buf.append(s[self.i + 1])
                self.i += 2
            else:
                buf.append(c)
                self.i += 1
        return Part("cmd", parse("".join(buf), self.depth + 1), quoted)


# ---------------------------------------------------------------------------- parser
class _Parser:
    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def is_op(self, *ops: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "op" and t.op in ops

    def parse(self) -> list:
        out = self.parse_list(top=True)
        if self.peek() is not None:
            raise ShellSyntaxError(f"unexpected '{self._show(self.peek())}'")
        return out

    def parse_list(self, top: bool = False) -> list:
        items: list[AndOr] = []
        while True:
            while self.is_op(";", "&", "\n"):
                if not self.is_op("\n") and not items:
                    raise ShellSyntaxError(f"unexpected '{self.peek().op}'")
                self.i += 1
            t = self.peek()
            if t is None or (t.kind == "op" and t.op == ")"):
                return items
            items.append(self.parse_and_or())
            if not self.is_op(";", "&", "\n"):
                t = self.peek()
                if t is None or (t.kind == "op" and t.op == ")"):
                    return items
                raise ShellSyntaxError(f"unexpected '{self._show(t)}'")

    def parse_and_or(self) -> AndOr:
        first = self.parse_pipeline()
        rest = []
        while self.is_op("&&", "||"):
            op = self.peek().op
            self.i += 1
            while self.is_op("\n"):
                self.i += 1
            rest.append((op, self.parse_pipeline()))
        return AndOr(first, rest)

    def parse_pipeline(self) -> Pipeline:
        negate = False
        t = self.peek()
        if t is not None and t.kind == "word" and t.word.literal() == "!" and t.word.parts and not t.word.parts[0].quoted:
            negate = True
            self.i += 1
        cmds = [self.parse_command()]
        while self.is_op("|"):
            self.i += 1
            while self.is_op("\n"):
                self.i += 1
            cmds.append(self.parse_command())
        return Pipeline(cmds, negate)

    def parse_command(self):
        if self.is_op("("):
            self.i += 1
            body = self.parse_list()
            if not self.is_op(")"):
                raise ShellSyntaxError("unexpected end of file (expecting ')')")
            self.i += 1
            if not body:
                raise ShellSyntaxError("unexpected ')'")
            return Group(body, self.parse_redirects([]))
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            t = self.peek()
            if t is None:
                break
            if t.kind == "io" or (t.kind == "op" and t.op in ("<", ">", ">>", ">&", "<&")):
                self.parse_redirects(redirects, once=True)
                continue
            if t.kind != "word":
                break
            self.i += 1
            name = _assignment_name(t.word)
            if name is not None and not words:
                first = t.word.parts[0]
                value = Word([Part("lit", str(first.value)[len(name) + 1:], first.quoted)] + t.word.parts[1:])
                assigns.append((name, value))
            else:
                words.append(t.word)
        if not words and not assigns and not redirects:
            t = self.peek()
            raise ShellSyntaxError(f"unexpected '{self._show(t)}'" if t else "unexpected end of file")
        return Simple(assigns, words, redirects)

    def parse_redirects(self, into: list[Redirect], once: bool = False) -> list[Redirect]:
        while True:
            t = self.peek()
            fd = None
            if t is not None and t.kind == "io":
                fd = t.io_number
                self.i += 1
                t = self.peek()
            if t is None or t.kind != "op" or t.op not in ("<", ">", ">>", ">&", "<&"):
                if fd is not None:
                    raise ShellSyntaxError("redirection without an operator")
                return into
            self.i += 1
            target = self.peek()
            if target is None or target.kind != "word":
                raise ShellSyntaxError(f"unexpected '{self._show(target)}'" if target else "unexpected end of file")
            self.i += 1
            op = ">&" if t.op == "<&" else t.op
            into.append(Redirect(fd if fd is not None else (0 if op == "<" else 1), op, target.word))
            if once:
                return into

    @staticmethod
    def _show(t: Tok | None) -> str:
        if t is None:
            return "end of file"
        if t.kind == "op":
            return "newline" if t.op == "\n" else t.op
        return "word"


def _assignment_name(word: Word) -> str | None:
    if not word.parts or word.parts[0].kind != "lit" or word.parts[0].quoted:
        return None
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", str(word.parts[0].value))
    return m.group(1) if m else None


def parse(text: str, depth: int = 0) -> list:
    """Parse a script into a list of AndOr nodes (raises ShellSyntaxError)."""
    return _Parser(_Lexer(text, depth).tokens()).parse()


# ---------------------------------------------------------------------------- execution
class FileSystem(Protocol):
    def read(self, path: str) -> bytes | None: ...
    def write(self, path: str, data: bytes, append: bool = False) -> bool: ...


@dataclass
class IO:
    """What a command sees: its stdin and where to write. Commands return their exit status."""
    stdin: bytes
    stdout: bytearray
    stderr: bytearray
    shell: "Shell"

    def out(self, text: str | bytes) -> None:
        self.stdout += text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text

    def err(self, text: str) -> None:
        self.stderr += text.encode("utf-8", "surrogateescape")


Command = Callable[[IO, list[str]], int]


@dataclass
class ShellResult:
    stdout: bytes
    stderr: bytes
    exit_code: int
    output: bytes = b""      # stdout and stderr interleaved in write order (what shell v1 sends)


class _Tee(bytearray):
    """A terminal stream that also appends to the combined, in-order output."""

    def __init__(self, combined: bytearray) -> None:
        super().__init__()
        self.combined = combined

    def __iadd__(self, data):  # type: ignore[override]
        super().__iadd__(data)
        self.combined += data
        return self


class Shell:
    """Runs scripts against a table of commands. ``record`` sees every argv that runs."""

    def __init__(self, commands: dict[str, Command], record: Callable[[list[str]], None],
                 fs: FileSystem, env: dict[str, str] | None = None) -> None:
        self.commands = commands
        self.record = record
        self.fs = fs
        self.env = dict(env or {})
        self.status = 0
        self.builtins: dict[str, Command] = {
            "echo": _echo, ":": _true, "true": _true, "false": _false, "exit": _exit,
            "cd": _true, "export": self._export, "sh": self._sh,
        }

    # ---- entry points ----
    def run(self, script: str, stdin: bytes = b"") -> ShellResult:
        combined = bytearray()
        out, err = _Tee(combined), _Tee(combined)
        code = self._script(script, IO(stdin, out, err, self), depth=0)
        return ShellResult(bytes(out), bytes(err), code, bytes(combined))

    def _script(self, script: str, io: IO, depth: int) -> int:
        try:
            tree = parse(script, depth)
        except ShellSyntaxError as e:
            io.err(f"{SH}: syntax error: {e}\n")
            self.status = 1
            return 1
        except RecursionError:
            io.err(f"{SH}: syntax error: nesting too deep\n")
            self.status = 1
            return 1
        try:
            return self._list(tree, io, depth)
        except ShellExit as e:
            self.status = e.code
            return e.code

    # ---- tree walking ----
    def _list(self, items: list, io: IO, depth: int) -> int:
        for item in items:
            self._and_or(item, io, depth)
        return self.status

    def _and_or(self, node: AndOr, io: IO, depth: int) -> None:
        self.status = self._pipeline(node.first, io, depth)
        for op, pipe in node.rest:
            if (op == "&&") == (self.status == 0):
                self.status = self._pipeline(pipe, io, depth)

    def _pipeline(self, node: Pipeline, io: IO, depth: int) -> int:
        stdin = io.stdin
        code = 0
        for idx, cmd in enumerate(node.commands):
            last = idx == len(node.commands) - 1
            out = io.stdout if last else bytearray()
            code = self._command(cmd, IO(stdin, out, io.stderr, self), depth)
            stdin = bytes(out)
        return int(not code) if node.negate else code

    def _command(self, node, io: IO, depth: int) -> int:
        try:
            io = self._redirect(node.redirects, io, depth)
        except _RedirectFailed as e:
            io.err(f"{SH}: {e}\n")
            return 1
        if isinstance(node, Group):
            code = self._list(node.body, io, depth)
        else:
            code = self._simple(node, io, depth)
        io.flush_files() if isinstance(io, _FileIO) else None
        return code

    def _simple(self, node: Simple, io: IO, depth: int) -> int:
        argv: list[str] = []
        for w in node.words:
            argv.extend(self._expand(w, io, depth))
        values = {name: "".join(self._expand(w, io, depth, split=False)) for name, w in node.assigns}
        if not argv:
            self.env.update(values)
            return 0
        self.record(list(argv))
        fn = self.builtins.get(argv[0]) or self.commands.get(argv[0])
        if fn is None and "/" in argv[0]:
            fn = self.commands.get(argv[0].rsplit("/", 1)[1]) if argv[0].startswith(("/system/bin/", "/system/xbin/")) else None
        if fn is None:
            io.err(f"{SH}: {argv[0]}: not found\n")
            return 127
        saved = dict(self.env)
        self.env.update(values)
        try:
            return int(fn(io, argv)) & 0xFF
        except ShellExit:
            raise
        except Exception as e:  # a device command bug must read like a crashed tool, not kill the phone
            io.err(f"{argv[0]}: internal error: {type(e).__name__}: {e}\n")
            return 1
        finally:
            if values:
                self.env = saved

    # ---- expansion ----
    def _expand(self, word: Word, io: IO, depth: int, split: bool = True) -> list[str]:
        fields: list[str] = []
        cur: list[str] = []
        have = False            # the current field exists (even if empty, e.g. from '')
        for part in word.parts:
            if part.kind == "lit":
                cur.append(str(part.value))
                have = True
                continue
            value = self._param(str(part.value)) if part.kind == "param" else self._substitute(part.value, io, depth)
            if part.quoted or not split:
                cur.append(value)
                have = True
                continue
            pieces = [p for p in _IFS.split(value) if p]
            if not pieces:
                continue
            if value[:1] in " \t\n" and have:
                fields.append("".join(cur))
                cur, have = [], False
            for k, piece in enumerate(pieces):
                if k:
                    fields.append("".join(cur))
                    cur = []
                cur.append(piece)
                have = True
            if value[-1:] in (" ", "\t", "\n"):
                fields.append("".join(cur))
                cur, have = [], False
        if have:
            fields.append("".join(cur))
        return fields

    def _param(self, spec: str) -> str:
        name, _, default = spec.partition(":-")
        if name == "?":
            value = str(self.status)
        elif name == "$":
            value = "4242"
        elif name == "#":
            value = "0"
        elif name == "0":
            value = "sh"
        else:
            value = self.env.get(name, "")
        return value if value or not default else default

    def _substitute(self, tree: list, io: IO, depth: int) -> str:
        if depth + 1 > MAX_DEPTH:
            return ""
        out = bytearray()
        saved = self.status
        try:
            self._list(tree, IO(b"", out, io.stderr, self), depth + 1)
        except ShellExit as e:
            self.status = e.code
        del saved
        return out.decode("utf-8", "replace").rstrip("\n")

    # ---- redirections ----
    def _redirect(self, redirects: list[Redirect], io: IO, depth: int) -> IO:
        if not redirects:
            return io
        fio = _FileIO(io.stdin, io.stdout, io.stderr, self)
        for r in redirects:
            target = "".join(self._expand(r.target, io, depth, split=False))
            if r.op == ">&":
                if target not in ("1", "2"):
                    raise _RedirectFailed(f"{target}: bad file descriptor")
                src = fio.stdout if target == "1" else fio.stderr
                if r.fd == 1:
                    fio.stdout = src
                elif r.fd == 2:
                    fio.stderr = src
            elif r.op == "<":
                data = self.fs.read(target)
                if data is None:
                    raise _RedirectFailed(f"{target}: No such file or directory")
                fio.stdin = data
            else:
                buf = bytearray()
                if target != "/dev/null":
                    fio.files.append((target, buf, r.op == ">>"))
                if r.fd == 1:
                    fio.stdout = buf
                elif r.fd == 2:
                    fio.stderr = buf
        return fio

    # ---- builtins that need the shell ----
    def _export(self, io: IO, argv: list[str]) -> int:
        for a in argv[1:]:
            name, eq, value = a.partition("=")
            if eq and _NAME.fullmatch(name):
                self.env[name] = value
        return 0

    def _sh(self, io: IO, argv: list[str]) -> int:
        if len(argv) >= 3 and argv[1] == "-c":
            sub = Shell(self.commands, self.record, self.fs, self.env)
            return sub._script(argv[2], io, depth=1)
        if len(argv) == 1 and io.stdin:
            return Shell(self.commands, self.record, self.fs, self.env)._script(
                io.stdin.decode("utf-8", "replace"), io, depth=1)
        io.err(f"{SH}: usage: sh -c COMMAND\n")
        return 2


class _RedirectFailed(Exception):
    pass


@dataclass
class _FileIO(IO):
    files: list[tuple[str, bytearray, bool]] = field(default_factory=list)

    def flush_files(self) -> None:
        for path, buf, append in self.files:
            self.shell.fs.write(path, bytes(buf), append=append)


def _echo(io: IO, argv: list[str]) -> int:
    args = argv[1:]
    newline = True
    if args and args[0] == "-n":
        newline = False
        args = args[1:]
    io.out(" ".join(args) + ("\n" if newline else ""))
    return 0


def _true(io: IO, argv: list[str]) -> int:
    return 0


def _false(io: IO, argv: list[str]) -> int:
    return 1


def _exit(io: IO, argv: list[str]) -> int:
    try:
        code = int(argv[1]) if len(argv) > 1 else io.shell.status
    except ValueError:
        io.err(f"{SH}: exit: {argv[1]}: bad number\n")
        code = 2
    raise ShellExit(code & 0xFF)
