"""Training, the layer behind ``train.py``: the search-guided trainer (:mod:`.az`), PPO
self-play (:mod:`.ppo`: the session a command runs, the run in memory, its opponent pool,
the callback around PPO's updates and the memory limits of its options), and what both
share: the run folder's files (:mod:`.run_folder`), checkpoints and exported policies
(:mod:`.checkpoint`), the warm start by imitation (:mod:`.imitation`), evaluation during
training (:mod:`.evaluation`), metrics (:mod:`.metrics`) and a dataclass as a command line
(:mod:`.cli`). The networks live in the agents layer (``agents/ppo/networks.py``,
``agents/az/net.py``), because playing a saved model needs them too."""
