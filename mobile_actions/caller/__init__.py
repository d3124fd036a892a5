"""The caller on PyTorch: loading the base model and adapters (`model`, `adapters`), greedy decoding
(`greedy`), and evaluation on Mobile Actions files (`evaluate`). Training lives in `mobile_actions.training`."""
