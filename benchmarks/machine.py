"""Names the machine a benchmark ran on (``aiayn.machine``; kept here so that
``from machine import describe`` keeps working for the scripts in this folder)."""

from aiayn.machine import describe

if __name__ == "__main__":
    print(describe())
