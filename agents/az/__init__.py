"""The search-guided agents: the az network (:mod:`.net`); the batched Gumbel search, with
its settings (:mod:`.config`), its tree of named arrays (:mod:`.tree`), Gumbel MuZero's
action selection (:mod:`.selection`, :mod:`.topk`), its compiled loops over games
(:mod:`.kernels`) and the loop that drives them (:mod:`.search`); random-playout values
(:mod:`.playouts`) and the agents that play them (:mod:`.agent`)."""
