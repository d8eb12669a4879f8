"""Evaluation: paired matches (:mod:`.arena`), round-robin tournaments (:mod:`.tournament`),
Wilson intervals and Elo (:mod:`.ratings`) and what a tournament leaves behind
(:mod:`.report`)."""
