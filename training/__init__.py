"""The parts of ``train.py``: the policy networks, the opponent pool, the warm start by
imitation, evaluation, and checkpoints."""
