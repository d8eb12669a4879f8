"""Layer 1, data: the 33 patches, the rules and their presets, the action contract and the
precomputed placement tables. Pure data and numpy; no game is played here."""
