"""Resizes a grayscale image to the 8x8 input of the digits classifier (a Triton Python-backend model)."""

import numpy as np
import triton_python_backend_utils as pb_utils

SIDE = 8


def to_digits_input(image):
    """Area-average the image onto an 8x8 grid and scale 0..255 to 0..16, as one row of 64 values."""
    height, width = image.shape
    rows = np.linspace(0, height, SIDE + 1).astype(np.int64)
    cols = np.linspace(0, width, SIDE + 1).astype(np.int64)
    sums = np.add.reduceat(np.add.reduceat(image.astype(np.float64), rows[:-1], axis=0), cols[:-1], axis=1)
    means = sums / np.outer(np.diff(rows), np.diff(cols))
    return (means * (16.0 / 255.0)).astype(np.float32).reshape(1, SIDE * SIDE)


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            image = pb_utils.get_input_tensor_by_name(request, "IMAGE").as_numpy()
            if image.shape[0] < SIDE or image.shape[1] < SIDE:
                error = pb_utils.TritonError(
                    f"IMAGE must be at least {SIDE}x{SIDE} pixels, got {image.shape[0]}x{image.shape[1]}",
                    pb_utils.TritonError.INVALID_ARG,
                )
                responses.append(pb_utils.InferenceResponse(error=error))
                continue
            output = pb_utils.Tensor("INPUT", to_digits_input(image))
            responses.append(pb_utils.InferenceResponse(output_tensors=[output]))
        return responses
