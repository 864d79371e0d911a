"""The numerics, over numbers and core records only: intervals (`intervals`), small-sample corrections
(`smallsample`), the paired comparison of two sets of item scores (`comparison`), families of comparisons, power,
anytime-valid sequences (`sequential`). The comparisons of runs that use them are `proctor.analysis`'s.
"""
