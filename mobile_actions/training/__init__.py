"""Training the caller (the `train` extra: torch, transformers, peft, trl).

- `caller`: one fine-tuning run, `train(CallerSFTConfig(...))`, and what it is built from (row encoding,
  control-token rows, init adapters, resuming).
- `shared_prefix`: a trainer that runs the prompt prefix a step's rows share once.
- `buckets`: batches of rows of similar length and kind.
- `cpu_step`: `cpu_fast_path(model)`, a LoRA step on a CPU without the work that changes nothing, built from
  `frozen_head`, `gap_dropout`, `held_attention` and `elementwise`; `fused_head`: trl's fused head where it
  does not fit as it comes.
- `curves`: `loss.csv` / `loss.png` of a run, and loss curves compared.
- `bench`: training throughput of recipes over the same steps, taken in turn.
- `allocator`: the memory allocator a training process starts with.

Importing a module changes nothing outside it: every change to a third-party model or library is a context
manager over the block that needs it.
"""
