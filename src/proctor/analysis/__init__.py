"""Comparisons of runs, read from their directories or the history: paired comparison (`compare`, and which runs
may be paired: `comparable`), the release gate (`gate`), the leaderboard, why two runs differ (`explain`), and
agreement between backends (`agree`). The numerics they use are `proctor.stats`'s.
"""
