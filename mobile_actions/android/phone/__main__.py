"""``python -m mobile_actions.android.phone [--port P]``: the same as ``mobile-actions phone``."""

import argparse
import sys

from mobile_actions.cli.android import register


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mobile_actions.android.phone")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["phone", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
