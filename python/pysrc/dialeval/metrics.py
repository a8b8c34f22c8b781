"""Text-overlap metrics with the call shapes of sacrebleu, rouge-score and nltk, and NIDF, a
response's specificity (See et al. 2019) over the bundled DailyDialog document frequencies.

>>> from dialeval.metrics import sentence_bleu, corpus_bleu, rouge_l, meteor
>>> round(sentence_bleu("the cat sat on the mat", ["the cat sat on a mat"]), 4)
57.3071
"""

from ._dialeval import Score, corpus_bleu, meteor, nidf, rouge_l, sentence_bleu

__all__ = ["Score", "corpus_bleu", "meteor", "nidf", "rouge_l", "sentence_bleu"]
