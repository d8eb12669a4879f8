"""Layer 5, framework adapters, each optional: Stable-Baselines3 (:mod:`.sb3`), OpenSpiel
(:mod:`.openspiel`) and Ray RLlib (:mod:`.rllib`). Each imports its framework itself."""
