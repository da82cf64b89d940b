"""Data leaves only on purpose: per-turn taint tracking and the outbound policy around tools.

`ledger` records what untrusted sources and private values entered a turn, `matching` finds
private values in what a call would send, `marks` labels memory written under a stranger's
influence, `policy` is the tool registry's gate and `seed` reads a turn's own inputs.
"""
