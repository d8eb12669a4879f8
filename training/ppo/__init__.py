"""PPO self-play training: the run in memory (:mod:`.run`), its opponent pool (:mod:`.pool`),
the callback around PPO's updates (:mod:`.callback`) and the memory a run's options ask for
(:mod:`.limits`)."""
