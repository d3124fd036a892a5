"""The `mobile-actions` command: one module per job, each with `register(subparsers)`; `main` builds it."""
