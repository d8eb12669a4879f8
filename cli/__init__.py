"""The programs' command-line plumbing (:mod:`.common`) and ``patchwork-play`` (:mod:`.play`)."""
