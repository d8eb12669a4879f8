"""The parts of ``train.py``: the run in memory (``run``) and its folder (``run_folder``),
the opponent pool, the warm start by imitation, evaluation, the callback around PPO's
updates, metrics, checkpoints and exported policies, the limits a run's options must keep
to, and the command line. (The policy networks live in the agents layer,
``agents/ppo/networks.py``, because playing a saved model needs them too.)"""
