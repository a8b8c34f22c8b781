"""AMR graphs: PENMAN read and written as penman does, and Smatch as smatch.py computes it.

>>> from dialeval.amr import decode, encode, smatch
>>> g = decode("(w / want-01 :ARG0 (b / boy))")
>>> encode(g)
'(w / want-01\\n   :ARG0 (b / boy))'
"""

from ._dialeval import Graph, decode, decode_all, encode, smatch

__all__ = ["Graph", "decode", "decode_all", "encode", "smatch"]
