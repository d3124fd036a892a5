"""The synthetic data generator (`generate`) and its phrase data.

- `templates`: the phrasing-template language (choices, optionals, guarded slots).
- `dates`: relative date/time expressions generated from their resolved value.
- `values`: international names, emails, phone formats, addresses, businesses, subjects, bodies.
- `mobile`: rich phrasing families for the 7 Mobile Actions tools.
- `generic`: a schema-driven grammar for any other tool.
- `refusals`: requests no tool can serve, and the refusal replies.
- `style`: registers, openers/closers, joining several requests, casing and typos.
"""
