"""What the toolkit guarantees while the caller decodes: the call grammar (`grammar`), values grounded in
the conversation (`grounding`), and the datetimes a request can mean (`datetimes`)."""
