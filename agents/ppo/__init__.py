"""The PPO agent: its policy networks (:mod:`.networks`) and the agent that plays a trained
policy file (:mod:`.agent`)."""
