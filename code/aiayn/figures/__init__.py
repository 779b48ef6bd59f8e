"""Drawings of the paper's figures, in matplotlib, labels in the page's language (``tr``)."""
