"""Builds the course's model and counts its distinct parameters: the right number, without
the formula the exercise asks for.

exercise: putting_it_together/count_parameters
caught by: a formula: no model is built (and no count of the course's is called)
message mentions: aiayn/pt/model.py: Transformer.__init__
breaks: count_parameters: formula
"""

from aiayn.pt.model import Transformer


def count_parameters(config):
    model = Transformer(config)  # the mistake: the model, not a formula
    return sum(p.numel() for p in model.parameters())
