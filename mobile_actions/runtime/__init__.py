"""The on-device caller: an ONNX export run by onnxruntime, torch-free (`onnx`)."""
from mobile_actions.runtime.onnx import (Caller, CallResult, Decoder, ExportFormatError, read_manifest, result_from_raw,
                                         with_left_out)

__all__ = ["Caller", "CallResult", "Decoder", "ExportFormatError", "read_manifest", "result_from_raw", "with_left_out"]
