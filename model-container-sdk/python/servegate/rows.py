"""Per-row errors: a batch the predictor raises on is split to find the rows it raises on.

A failed batch is predicted again in halves, down to single rows; a row that raises alone is a
failed row and every other row keeps its real output. The container then answers the call with
one more output tensor, ``servegate_row_errors`` (BYTES [N]: "" for a predicted row, the error's
message for a failed one), and a placeholder ("" or zeros) in the failed rows' place of the
model's output; see docs/containers.md, "Per-row errors". A batch of n with k bad rows costs at
most about 2·k·log2(n) more predictor calls, and none while no row raises.

A predictor that fails every row of a batch of two or more is taken to be broken, not fed bad
rows: the batch fails as a whole (the first row's error), unless every row raised
:class:`InvalidInput`. A batch of one cannot tell the two apart: its error is the row's.
"""

import numpy as np

ROW_ERRORS = "servegate_row_errors"


class InvalidInput(ValueError):
    """Raised by ``predict_batch`` for an input it cannot predict because of the input itself (a
    corrupt image, a value out of the model's domain): the client's error. With row isolation it is
    that row's error; without, the call fails INVALID_ARGUMENT instead of INTERNAL."""


def predict(predict_batch, batch, check_count, numeric_output):
    """(outputs, errors): the predictor's outputs, or a list of them with placeholders in failed
    rows' places (zeros for a ``numeric_output``, else ""); ``errors`` is None when every row was
    predicted, else one message per row ("" for a predicted one). ``check_count(outputs, n)`` raises
    when the predictor answered n rows with other than n outputs."""
    n = len(batch)
    try:
        outputs = predict_batch(batch)
    except Exception as e:  # noqa: BLE001 - any error of the model's may be one row's
        first = e
    else:
        check_count(outputs, n)
        return outputs, None
    rows = [None] * n
    errors = [None] * n
    if n == 1:
        errors[0] = first
    else:
        _isolate(predict_batch, batch, 0, n // 2, rows, errors, check_count)
        _isolate(predict_batch, batch, n // 2, n, rows, errors, check_count)
    failed = [e for e in errors if e is not None]
    if not failed:  # it answered every part: a failure of the whole batch only
        return rows, None
    if len(failed) == n and n > 1 and not all(isinstance(e, InvalidInput) for e in failed):
        raise failed[0]
    sample = next((r for r, e in zip(rows, errors) if e is None), None)
    blank = (np.zeros_like(np.asarray(sample)) if sample is not None else 0) if numeric_output else ""
    return ([blank if e is not None else r for r, e in zip(rows, errors)],
            ["" if e is None else message(e) for e in errors])


def _isolate(predict_batch, batch, lo, hi, rows, errors, check_count):
    part = batch[lo:hi]
    try:
        outputs = predict_batch(part)
    except Exception as e:  # noqa: BLE001
        if hi - lo == 1:
            errors[lo] = e
            return
        mid = (lo + hi) // 2
        _isolate(predict_batch, batch, lo, mid, rows, errors, check_count)
        _isolate(predict_batch, batch, mid, hi, rows, errors, check_count)
        return
    check_count(outputs, hi - lo)
    for k in range(hi - lo):
        rows[lo + k] = outputs[k]


def message(e):
    """A row's message: an InvalidInput's own text, else the exception's repr."""
    return str(e) if isinstance(e, InvalidInput) and str(e) else repr(e)
