"""Measurements and demonstrations the chapters make (timings, counts, gradient norms, ...).

Not part of the model: the model lives in ``aiayn.np`` and ``aiayn.pt``. Everything here is
tested like the model is, because the book shows it.
"""
