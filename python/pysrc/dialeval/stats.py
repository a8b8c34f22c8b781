"""Correlations with p-values as scipy.stats computes them (lists or numpy arrays).

>>> from dialeval.stats import spearman
>>> r, p = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
"""

from ._dialeval import SignificanceResult, kendall, pearson, spearman

__all__ = ["SignificanceResult", "kendall", "pearson", "spearman"]
