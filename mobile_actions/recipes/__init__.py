"""Programs built on the library: training (`train_caller`, `train_navigator`), export (`export_onnx`)
and benchmarks (`bench_*`). The library never imports these; the CLI and `accelerate launch -m` do."""
