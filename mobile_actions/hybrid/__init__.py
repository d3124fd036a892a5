"""Hybrid runs: a request becomes tool calls dispatched over adb plus GUI steps for the navigator
(`runner`), with the models behind them (`models`), the device session (`device`), and the run's
trace and replay (`trace`, `replay`)."""
