"""What the toolkit guarantees while the caller decodes: the call grammar (`grammar`)."""
