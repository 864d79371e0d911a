"""Honest numbers about runs: intervals (`intervals`), paired comparison (`comparison`, `compare`,
`comparable`), families of comparisons, power, the release gate, agreement between backends, the leaderboard.
"""
