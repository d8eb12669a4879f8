"""Layer 2, the engine: the compiled rules kernels, the batch of games that drives them
(:class:`~patchwork_env.engine.batch.GameBatch`) and the serialisation of a state.

The kernels in :mod:`.kernels` read like the rules page (``docs/rules.md``) and cite its
rule numbers; the bit tricks they rely on live apart, in :mod:`.bits`."""
