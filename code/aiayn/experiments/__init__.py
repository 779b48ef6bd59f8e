"""The course's long experiments: each one a command that writes committed results files.

A chapter never re-runs an experiment that takes minutes or hours; it reads the results file
that the experiment's command wrote (``record.read_results``), and a test re-runs a small part
of the experiment to prove that the committed file still matches the code.
"""
