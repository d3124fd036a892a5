"""What the toolkit guarantees while the caller decodes: the call grammar (`grammar`), values grounded in
the conversation (`grounding`), the date and time expressions a request holds (`datementions`) and the datetimes
they can mean (`datetimes`)."""
