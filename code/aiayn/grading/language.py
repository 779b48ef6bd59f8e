"""The grader's language: English, or Chinese in a Chinese notebook (``aiayn.language``'s rule,
which imports no matplotlib). Check names given in Chinese (``Exercise.check(name, zh=...)``) and
hints written with ``tr(en, zh)`` come out in the notebook's language; the report's frame (PASS,
expected:, hint:, result) and the promises quoted from the stubs stay English, as code and
printed output do in the Chinese chapters.
"""

from ..language import current_language, tr  # noqa: F401 (the graders import them from here)
