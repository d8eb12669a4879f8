"""The search-guided agents: the az network (:mod:`.net`), the batched Gumbel search over a
named tree (:mod:`.tree`, :mod:`.kernels`, :mod:`.search`), random-playout values
(:mod:`.playouts`) and the agents that play them (:mod:`.agent`)."""
