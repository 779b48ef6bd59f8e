"""Hands the work to the course's own rotation, the implementation it is graded against.

exercise: rotary_positions/rotate
caught by: turns the pairs itself, with nothing from aiayn's rotary modules
message mentions: aiayn/np/rotary.py; write the rotation here
breaks: rotate: own
"""

from aiayn.np import rotary


def rotate(x, start=0):
    return rotary.rotate(x, start)  # the mistake: not written here
