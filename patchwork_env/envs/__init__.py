"""Layer 4, environments: the PettingZoo AEC env, the Gymnasium env and its native vector
env, the opponent protocol and the duel that plays an opponent inside ``step()``."""
