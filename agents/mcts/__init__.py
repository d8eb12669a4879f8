"""The UCT tree search player: the compiled search (:mod:`.search`) and the agent
(:mod:`.agent`)."""
